#!/usr/bin/python3
# Tests of the emulated Kueue (kueue.py) on an in-memory store, with a minimal Job controller: a running Job has one
# active pod; a suspended one none. Run: python3 testbed/emulators/lib/kueue_test.py (KueueEmulatorTest runs it).
import os, sys, unittest
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kueue

NAMESPACED = {"jobs", "workloads", "localqueues", "events", "deployments", "pods", "services"}


class Store:
    def __init__(self):
        self.o, self.t, self.n = {}, 1000.0, 0

    def now(self):
        return self.t

    def key(self, res, ns, name):
        return (res, ns if res in NAMESPACED else None, name)

    def objs(self, res, ns=None):
        return sorted([v for (r, n, _), v in self.o.items() if r == res and (ns is None or n == ns)],
                      key=lambda v: (v["metadata"].get("namespace", ""), v["metadata"]["name"]))

    def get(self, res, ns, name):
        return self.o.get(self.key(res, ns, name))

    def put(self, res, obj):
        md = obj["metadata"]
        if not md.get("uid"):
            self.n += 1
            md["uid"] = "uid-%d" % self.n
            md["creationTimestamp"] = kueue.rfc3339(self.t)
            self.t += 1
        self.o[self.key(res, md.get("namespace"), md["name"])] = obj
        return obj

    def delete(self, res, ns, name):
        return self.o.pop(self.key(res, ns, name), None)


def cq(name, gpus, borrowing=None):
    r = {"name": "nvidia.com/gpu", "nominalQuota": gpus}
    if borrowing is not None:
        r["borrowingLimit"] = borrowing
    return {"apiVersion": kueue.API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {
        "cohort": "lab", "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-" + name}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "gpu", "resources": [r]}]}],
        "preemption": {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}, "withinClusterQueue": "Never"}}}


class KueueTest(unittest.TestCase):
    def setUp(self):
        s = self.s = Store()
        s.put("deployments", {"metadata": {"name": kueue.DEPLOYMENT, "namespace": kueue.NS},
                              "status": {"readyReplicas": 1, "conditions": [{"type": "Available", "status": "True"}]}})
        for res, name, webhook, path in (("mutatingwebhookconfigurations", kueue.MUTATING, "mjob.kb.io", "/mutate-batch-v1-job"),
                                         ("validatingwebhookconfigurations", kueue.VALIDATING, "vjob.kb.io", "/validate-batch-v1-job")):
            s.put(res, {"metadata": {"name": name}, "webhooks": [{"name": webhook, "failurePolicy": "Fail", "clientConfig": {
                "service": {"name": "kueue-webhook-service", "namespace": kueue.NS, "path": path}}}]})
        s.put("services", {"metadata": {"name": "kueue-webhook-service", "namespace": kueue.NS},
                           "spec": {"selector": {"control-plane": "controller-manager"}, "ports": [{"port": 443, "targetPort": 9443}]}})
        s.put("pods", {"metadata": {"name": "kueue-controller-manager-6d8f9-x2z4q", "namespace": kueue.NS,
                                    "labels": {"control-plane": "controller-manager"}},
                       "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
        s.put("resourceflavors", {"metadata": {"name": "gpu"}, "spec": {}})
        for team, borrowing in (("a", None), ("b", None)):
            s.put("namespaces", {"metadata": {"name": "team-" + team}})
            s.put("clusterqueues", cq(team, 2, borrowing))
            s.put("localqueues", {"metadata": {"name": team, "namespace": "team-" + team}, "spec": {"clusterQueue": team}})

    def submit(self, team, name, gpus=1):
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": name, "namespace": "team-" + team, "labels": {kueue.QUEUE_LABEL: team}},
               "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
                   {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}
        self.assertIsNone(kueue.job_webhook(self.s, job))
        self.assertTrue(job["spec"]["suspend"], "the webhook suspends a queued Job")
        return self.s.put("jobs", job)

    def settle(self, rounds=6):
        for _ in range(rounds):
            kueue.reconcile(self.s)
            for j in self.s.objs("jobs"):  # the Job controller: pods while not suspended
                j.setdefault("status", {})["active"] = 0 if j["spec"].get("suspend") else 1
            self.s.t += 1

    def wl(self, job):
        return kueue.job_workload(self.s, self.s.get("jobs", "team-" + job[0], job))

    def running(self):
        return sorted(j["metadata"]["name"] for j in self.s.objs("jobs") if not j["spec"].get("suspend"))

    def events(self, obj):
        return [(e["reason"], e["message"]) for e in self.s.objs("events") if e["involvedObject"]["uid"] == obj["metadata"]["uid"]]

    def test_borrow_then_reclaim(self):
        for n in ("a1", "a2", "a3"):
            self.submit("a", n)
        self.settle()
        self.assertEqual(["a1", "a2", "a3"], self.running(), "two within quota, the third borrows b's idle GPU")
        a3 = self.wl("a3")
        self.assertEqual("Quota reserved in ClusterQueue a", kueue.cond(a3, "QuotaReserved")["message"])
        cqa = self.s.get("clusterqueues", None, "a")["status"]
        self.assertEqual([{"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "total": "3", "borrowed": "1"}]}],
                         cqa["flavorsReservation"])
        self.assertEqual(3, cqa["admittedWorkloads"])
        self.submit("b", "b1", gpus=2)
        self.settle()
        self.assertEqual(["a1", "a2", "b1"], self.running(), "b reclaims its GPUs: the borrower is preempted")
        a3 = self.wl("a3")
        self.assertEqual(("True", "Preempted"), (kueue.cond(a3, "Evicted")["status"], kueue.cond(a3, "Evicted")["reason"]))
        self.assertEqual("InCohortReclamation", kueue.cond(a3, "Preempted")["reason"])
        self.assertTrue(kueue.cond(a3, "Preempted")["message"].startswith("Preempted to accommodate a workload (UID: "))
        self.assertTrue(kueue.cond(a3, "Preempted")["message"].endswith(") due to reclamation within the cohort"))
        self.assertEqual(("True", "Preempted"), (kueue.cond(a3, "Requeued")["status"], kueue.cond(a3, "Requeued")["reason"]))
        self.assertEqual("False", kueue.cond(a3, "QuotaReserved")["status"])
        self.assertEqual(("False", "NoReservation"), (kueue.cond(a3, "Admitted")["status"], kueue.cond(a3, "Admitted")["reason"]))
        self.assertTrue(self.s.get("jobs", "team-a", "a3")["spec"]["suspend"], "requeued: suspended, not failed")
        self.assertIn("Stopped", [r for r, _ in self.events(self.s.get("jobs", "team-a", "a3"))])
        self.assertEqual("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 1 more needed",
                         kueue.cond(a3, "QuotaReserved")["message"], "a waits with Kueue's reason")
        b1 = self.wl("b1")
        self.assertIn(("Warning", "Pending"), [(e["type"], e["reason"]) for e in self.s.objs("events")
                                                if e["involvedObject"]["uid"] == b1["metadata"]["uid"]])
        self.assertTrue(any(m.endswith("1 more needed. Pending the preemption of 1 workload(s)") for r, m in self.events(b1) if r == "Pending"))
        self.assertIn("Admitted", [r for r, _ in self.events(b1)])
        self.assertEqual(1, self.s.get("localqueues", "team-a", "a")["status"]["pendingWorkloads"])
        # a finished job frees its quota: the requeued one is admitted again
        a1 = self.s.get("jobs", "team-a", "a1")
        a1["status"]["conditions"] = [{"type": "Complete", "status": "True"}]
        self.settle()
        self.assertEqual(["a2", "a3", "b1"], [n for n in self.running() if n != "a1"])
        self.assertEqual("Quota reserved in ClusterQueue a", kueue.cond(self.wl("a3"), "QuotaReserved")["message"])
        self.assertEqual("True", kueue.cond(self.wl("a1"), "Finished")["status"])
        self.assertEqual("False", kueue.cond(self.wl("a3"), "Evicted")["status"])

    def test_borrowing_limit_and_a_job_above_any_quota(self):
        self.s.put("clusterqueues", cq("a", 2, 0))
        for n in ("a1", "a2", "a3"):
            self.submit("a", n)
        self.submit("a", "a4", gpus=5)
        self.settle()
        self.assertEqual(["a1", "a2"], self.running())
        self.assertEqual("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 1 more needed",
                         kueue.cond(self.wl("a3"), "QuotaReserved")["message"])
        self.assertEqual("couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor gpu, previously"
                         " considered podsets requests (0) + current podset request (5) > maximum capacity (2)",
                         kueue.cond(self.wl("a4"), "QuotaReserved")["message"])

    def test_a_namespace_the_selector_does_not_match_waits(self):
        self.s.put("localqueues", {"metadata": {"name": "a", "namespace": "team-b"}, "spec": {"clusterQueue": "a"}})
        job = self.submit("b", "x")
        job["metadata"]["labels"][kueue.QUEUE_LABEL] = "a"
        self.settle()
        self.assertEqual("Workload namespace doesn't match ClusterQueue selector", kueue.cond(kueue.job_workload(self.s, job), "QuotaReserved")["message"])

    def test_webhook_refuses_jobs_while_its_service_has_no_ready_endpoint(self):
        pod = self.s.get("pods", kueue.NS, "kueue-controller-manager-6d8f9-x2z4q")
        pod["status"]["conditions"][0]["status"] = "False"
        job = {"metadata": {"name": "x", "labels": {kueue.QUEUE_LABEL: "a"}}, "spec": {}}
        self.assertEqual('Internal error occurred: failed calling webhook "mjob.kb.io": failed to call webhook: Post'
                         ' "https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job?timeout=10s": no endpoints'
                         ' available for service "kueue-webhook-service"', kueue.job_webhook(self.s, job))
        self.assertNotIn("suspend", job["spec"], "a refused Job is not mutated")
        pod["status"]["conditions"][0]["status"] = "True"
        self.assertIsNone(kueue.job_webhook(self.s, job))
        self.assertTrue(job["spec"]["suspend"])
        self.s.delete("services", kueue.NS, "kueue-webhook-service")
        self.assertTrue(kueue.job_webhook(self.s, job).endswith(': service "kueue-webhook-service" not found'))

    def test_the_validating_webhook_refuses_a_bad_queue_name(self):
        job = {"metadata": {"name": "x", "labels": {kueue.QUEUE_LABEL: "A_b"}}, "spec": {}}
        self.assertTrue(kueue.job_webhook(self.s, job).startswith('admission webhook "vjob.kb.io" denied the request:'))

    def test_without_its_configurations_no_webhook_is_called(self):
        self.s.delete("mutatingwebhookconfigurations", None, kueue.MUTATING)
        self.s.delete("validatingwebhookconfigurations", None, kueue.VALIDATING)
        self.s.delete("pods", kueue.NS, "kueue-controller-manager-6d8f9-x2z4q")
        job = {"metadata": {"name": "x", "labels": {kueue.QUEUE_LABEL: "a"}}, "spec": {}}
        self.assertIsNone(kueue.job_webhook(self.s, job))
        self.assertNotIn("suspend", job["spec"], "nothing suspends a Job without Kueue's webhook")

    def test_crds_are_served(self):
        table = {}
        kueue.register_crds(table, [{"spec": {"group": "kueue.x-k8s.io", "scope": "Cluster", "names": {"plural": "clusterqueues",
                                              "kind": "ClusterQueue"}, "versions": [{"name": "v1beta1", "served": True, "storage": True}]}}])
        self.assertEqual({"clusterqueues": ("kueue.x-k8s.io/v1beta1", "ClusterQueue", False)}, table)


if __name__ == "__main__":
    unittest.main()
