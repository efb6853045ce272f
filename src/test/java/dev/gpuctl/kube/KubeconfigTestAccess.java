package dev.gpuctl.kube;

import java.util.Base64;

/** kubeadm's admin.conf from KubeconfigTest with a real certificate as its client certificate, for other packages' tests. */
public final class KubeconfigTestAccess {
    private KubeconfigTestAccess() {}

    public static String admin(byte[] certPem) {
        return KubeconfigTest.ADMIN.replace(KubeconfigTest.CERT, Base64.getEncoder().encodeToString(certPem));
    }
}
