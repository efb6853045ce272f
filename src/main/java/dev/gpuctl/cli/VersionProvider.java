package dev.gpuctl.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

final class VersionProvider implements CommandLine.IVersionProvider {
    @Override public String[] getVersion() throws IOException {
        Properties p = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("/dev/gpuctl/version.properties")) {
            if (in != null) p.load(in);
        }
        return new String[] {"gpuctl " + p.getProperty("version", "unknown"),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")"};
    }
}
