#!/usr/bin/python3
# Tests of the emulated `etcdutl snapshot restore` (etcdsnap.py) in a scratch root: a per-member restore with etcd's
# disaster-recovery flags gives members that are exactly --initial-cluster and data that is the snapshot's, and etcd's
# own refusals. Run: python3 testbed/emulators/lib/etcdsnap_test.py (EtcdRestoreEmulatorTest runs it).
import contextlib, hashlib, io, json, os, shutil, sys, tempfile, unittest

ROOT = tempfile.mkdtemp(prefix="etcdsnap-test.")
os.environ["GPUCTL_EMU_ROOT"] = ROOT
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etcdsnap

CLUSTER = "m1=https://10.0.0.1:2380,m2=https://10.0.0.2:2380,m3=https://10.0.0.3:2380"


def run(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = etcdsnap.etcdutl(list(argv))
    return rc, err.getvalue()


def restore(name, ip, dd, cluster=CLUSTER, advertise=None):
    return run("snapshot", "restore", "/snap.db", "--name", name, "--initial-cluster", cluster,
               "--initial-cluster-token", "gpuctl-restore-1", "--initial-advertise-peer-urls",
               advertise or "https://%s:2380" % ip, "--data-dir", dd)


def read(dd, f):
    with open(ROOT + dd + "/gpuctl-emu/" + f) as fh:
        return json.load(fh)


class RestoreTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        old = {"rv": 41, "objects": {"configmaps/default/before": {"x": 1}},
               "etcd": {"members": [{"id": 7, "name": "old", "peerURLs": ["https://10.0.0.9:2380"],
                                     "clientURLs": ["https://10.0.0.9:2379"], "isLearner": False}]}}
        data = json.dumps(old).encode()
        with open(ROOT + "/snap.db", "wb") as f:
            f.write(data + hashlib.sha256(data).digest())

    def test_every_member_restored_with_one_initial_cluster_agrees_on_the_members_and_holds_the_snapshot(self):
        views = []
        for i, name in enumerate(("m1", "m2", "m3")):
            dd = "/r/%s" % name
            rc, err = restore(name, "10.0.0.%d" % (i + 1), dd)
            self.assertEqual(0, rc, err)
            st = read(dd, "state.json")
            self.assertEqual({"configmaps/default/before": {"x": 1}}, st["objects"])
            self.assertEqual(41, st["rv"])
            views.append(st["etcd"]["members"])
            self.assertEqual({"name": name, "clientURL": "https://10.0.0.%d:2379" % (i + 1)}, read(dd, "member.json"))
        self.assertEqual(views[0], views[1])
        self.assertEqual(views[0], views[2])
        self.assertEqual(["m1", "m2", "m3"], sorted(m["name"] for m in views[0]))
        self.assertEqual({"https://10.0.0.%d:2380" % i for i in (1, 2, 3)}, {m["peerURLs"][0] for m in views[0]})
        self.assertNotIn(7, [m["id"] for m in views[0]])

    def test_a_data_dir_that_is_not_empty_is_refused(self):
        os.makedirs(ROOT + "/full/member")
        rc, err = restore("m1", "10.0.0.1", "/full")
        self.assertEqual(1, rc)
        self.assertIn('Error: data-dir "/full" not empty or could not be read', err)

    def test_a_name_not_in_the_initial_cluster_is_refused(self):
        rc, err = restore("m4", "10.0.0.4", "/r/m4")
        self.assertEqual(1, rc)
        self.assertIn('Error: couldn\'t find local name "m4" in the initial cluster configuration', err)
        self.assertFalse(os.path.exists(ROOT + "/r/m4"))

    def test_advertised_peer_urls_that_are_not_the_members_are_refused(self):
        rc, err = restore("m1", "10.0.0.1", "/r/x", advertise="https://10.0.0.2:2380")
        self.assertEqual(1, rc)
        self.assertIn("Error: --initial-cluster has m1=https://10.0.0.1:2380 but missing from --initial-advertise-peer-urls", err)

    def test_a_url_twice_is_refused(self):
        rc, err = restore("m1", "10.0.0.1", "/r/y", cluster="m1=https://10.0.0.1:2380,m2=https://10.0.0.1:2380")
        self.assertEqual(1, rc)
        self.assertIn("has duplicate url", err)


def tearDownModule():
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
