package dev.gpuctl.cli;

import picocli.CommandLine.Option;

/** -v / --verbose: debug logging and stack traces. Sets slf4j-simple's level before the first logger exists. */
public final class VerbosityMixin {
    private static volatile boolean verbose;

    @Option(names = {"-v", "--verbose"}, description = "Debug logging, and stack traces on errors.", scope = picocli.CommandLine.ScopeType.INHERIT)
    void setVerbose(boolean v) {
        verbose = v;
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", v ? "debug" : "warn");
        // sshj reports refused host keys and the like as stack traces; gpuctl reports them itself
        System.setProperty("org.slf4j.simpleLogger.log.net.schmizz", v ? "debug" : "off");
        System.setProperty("org.slf4j.simpleLogger.log.com.hierynomus", v ? "debug" : "off");
    }

    public static boolean isVerbose() { return verbose; }

    static void reset() { verbose = false; }
}
