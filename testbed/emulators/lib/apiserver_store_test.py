#!/usr/bin/python3
# Tests of the emulated kube-apiserver's store (apiserver_store.py): label and field selectors, JSON merge patch,
# put/dry-run/delete and the state file, under a scratch GPUCTL_EMU_ROOT.
# Run: python3 testbed/emulators/lib/apiserver_store_test.py (ApiServerStoreEmulatorTest runs it).
import atexit, os, shutil, sys, tempfile, unittest
ROOT = tempfile.mkdtemp(prefix="apiserver-store-test-")
atexit.register(shutil.rmtree, ROOT, True)
os.environ["GPUCTL_EMU_ROOT"] = ROOT
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apiserver_store as store


def pod(name, ns="default", labels=None, phase=None, node=None):
    p = {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": {}}
    if node:
        p["spec"]["nodeName"] = node
    if phase:
        p["status"] = {"phase": phase}
    return p


class Selectors(unittest.TestCase):
    def test_label_selector_terms(self):
        labels = {"app": "web", "tier": "front"}
        self.assertTrue(store.selector_match(labels, "app=web"))
        self.assertTrue(store.selector_match(labels, "app==web, tier=front"))
        self.assertFalse(store.selector_match(labels, "app=db"))
        self.assertTrue(store.selector_match(labels, "app!=db"))
        self.assertFalse(store.selector_match(labels, "app!=web"))
        self.assertTrue(store.selector_match(labels, "tier"))
        self.assertFalse(store.selector_match(labels, "zone"))
        self.assertTrue(store.selector_match(labels, "!zone"))
        self.assertFalse(store.selector_match(labels, "!app"))
        self.assertTrue(store.selector_match(labels, ""))

    def test_field_selector_walks_dotted_paths(self):
        p = pod("a", phase="Running", node="n1")
        self.assertTrue(store.field_match(p, "spec.nodeName=n1"))
        self.assertTrue(store.field_match(p, "status.phase==Running,metadata.name=a"))
        self.assertFalse(store.field_match(p, "spec.nodeName=n2"))
        self.assertTrue(store.field_match(pod("b"), "spec.nodeName="))
        self.assertFalse(store.field_match(pod("b"), "status.phase=Running"))


class Merge(unittest.TestCase):
    def test_merge_patch_recurses_replaces_and_deletes_on_null(self):
        dst = {"metadata": {"labels": {"a": "1", "b": "2"}, "name": "n"}, "spec": {"taints": [{"key": "x"}]}}
        store.merge(dst, {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"taints": [], "unschedulable": True}})
        self.assertEqual({"metadata": {"labels": {"b": "2", "c": "3"}, "name": "n"},
                          "spec": {"taints": [], "unschedulable": True}}, dst)
        store.merge(dst, None)
        self.assertEqual("n", dst["metadata"]["name"])


class PutDeleteDryRun(unittest.TestCase):
    def setUp(self):
        store.S.clear()
        store.S.update({"objects": {}, "heartbeats": {}, "cluster": {}, "rv": 1})

    def test_put_defaults_kind_namespace_and_keeps_uid_and_generation_rules(self):
        o = store.put("pods", {"metadata": {"name": "p"}, "spec": {"a": 1}})
        self.assertEqual(("v1", "Pod", "default", "2", 1), (o["apiVersion"], o["kind"], o["metadata"]["namespace"],
                                                            o["metadata"]["resourceVersion"], o["metadata"]["generation"]))
        uid = o["metadata"]["uid"]
        self.assertRegex(uid, r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
        same = store.put("pods", {"metadata": {"name": "p"}, "spec": {"a": 1}})
        self.assertEqual((uid, 1, "3"), (same["metadata"]["uid"], same["metadata"]["generation"], same["metadata"]["resourceVersion"]))
        changed = store.put("pods", {"metadata": {"name": "p"}, "spec": {"a": 2}})
        self.assertEqual((uid, 2), (changed["metadata"]["uid"], changed["metadata"]["generation"]))
        node = store.put("nodes", {"metadata": {"name": "n1", "namespace": "ignored"}})
        self.assertIsNotNone(store.get("nodes", None, "n1"))
        self.assertEqual("Node", node["kind"])

    def test_objs_filters_by_namespace_sorted_and_delete_removes(self):
        for name, ns in (("b", "x"), ("a", "y"), ("c", "x")):
            store.put("pods", pod(name, ns))
        self.assertEqual(["b", "c", "a"], [o["metadata"]["name"] for o in store.objs("pods")])
        self.assertEqual(["b", "c"], [o["metadata"]["name"] for o in store.objs("pods", "x")])
        self.assertEqual("b", store.delete("pods", "x", "b")["metadata"]["name"])
        self.assertIsNone(store.delete("pods", "x", "b"))
        self.assertEqual(["c"], [o["metadata"]["name"] for o in store.objs("pods", "x")])

    def test_dry_run_answers_what_put_would_store_and_stores_nothing(self):
        store.put("pods", pod("kept"))
        before_rv, before = store.S["rv"], dict(store.S["objects"])
        o = store.dry_run("pods", pod("new", labels={"l": "v"}))
        self.assertEqual(("new", "default", "v1", str(before_rv + 1)),
                         (o["metadata"]["name"], o["metadata"]["namespace"], o["apiVersion"], o["metadata"]["resourceVersion"]))
        self.assertEqual((before_rv, before), (store.S["rv"], store.S["objects"]))
        self.assertIsNone(store.get("pods", "default", "new"))

    def test_state_file_round_trip_refills_the_one_state_in_place(self):
        shared = store.S
        store.put("configmaps", {"metadata": {"name": "cm", "namespace": "kube-system"}, "data": {"k": "v"}})
        store.save()
        self.assertTrue(os.path.exists(ROOT + store.STATE_FILE))
        self.assertEqual(0o600, os.stat(ROOT + store.STATE_FILE).st_mode & 0o777)
        store.S.clear()
        store.load()
        self.assertIs(shared, store.S)
        self.assertEqual({"k": "v"}, store.get("configmaps", "kube-system", "cm")["data"])
        self.assertEqual(store.S["rv"], store.load_state()["rv"])


if __name__ == "__main__":
    unittest.main()
