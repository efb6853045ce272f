package dev.gpuctl;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package arrows of docs/design.md and docs/layout.md, checked on the compiled main classes:
 * <pre>
 * cli ──▶ workflow ──▶ engine ──▶ steps ──▶ remote
 *  └──▶ inventory, workload        (workload reads the cluster through a Remote)
 * step (the vocabulary: Step, Phase, Probe, Op, Facts) is used by workflow, engine and steps, and names no concrete step
 * everything may use the pure packages and net (CIDR math); inventory is pure records. The pure packages, each
 * using only those below it:  gpu ──▶ kube ──▶ hostfiles ──▶ text,   backup ──▶ kube
 * </pre>
 * and the engine is one: its pool and its run directory are HostRun's alone, its runners made by the engine only
 * (a command is a workflow the engine runs as one session), its lock taken by the runner only.
 * A rule here is the design, not a description of today's code: a failure is a dependency to move.
 */
class LayeringTest {
    /** Pure functions over host files, tools' output and Kubernetes objects: text in, values out; no host, no engine. */
    private static final String[] PURE = {
        "dev.gpuctl.text..", "dev.gpuctl.hostfiles..", "dev.gpuctl.kube..", "dev.gpuctl.gpu..", "dev.gpuctl.backup.."};
    private static JavaClasses classes;

    @BeforeAll static void importMainClasses() {
        classes = new ClassFileImporter()
            // -DbuildDir puts the test classes outside target/: recognise them by their directory and by name
            .withImportOption(location -> !location.contains("/test-classes/"))
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.gpuctl");
    }

    @Test void layersPointOneWay() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("cli").definedBy("dev.gpuctl.cli..")
            .layer("workflow").definedBy("dev.gpuctl.workflow..")
            .layer("engine").definedBy("dev.gpuctl.engine..")
            .layer("workload").definedBy("dev.gpuctl.workload..")
            .layer("steps").definedBy("dev.gpuctl.steps..")
            .layer("step").definedBy("dev.gpuctl.step..")
            .layer("remote").definedBy("dev.gpuctl.remote..")
            .layer("inventory").definedBy("dev.gpuctl.inventory..")
            .layer("pure").definedBy(PURE)
            .layer("net").definedBy("dev.gpuctl.net..")
            .whereLayer("cli").mayNotBeAccessedByAnyLayer()
            .whereLayer("workflow").mayOnlyBeAccessedByLayers("cli")
            .whereLayer("engine").mayOnlyBeAccessedByLayers("cli", "workflow")
            .whereLayer("workload").mayOnlyBeAccessedByLayers("cli", "workflow")
            // a command's phases are its workflow's: cli names steps only through a workflow
            .whereLayer("steps").mayOnlyBeAccessedByLayers("workflow", "engine")
            .whereLayer("step").mayOnlyBeAccessedByLayers("workflow", "engine", "steps")
            .whereLayer("remote").mayOnlyBeAccessedByLayers("step", "steps", "engine", "workflow", "workload", "cli")
            .whereLayer("inventory").mayOnlyBeAccessedByLayers("cli", "workflow", "engine", "workload", "step", "steps", "remote")
            .check(classes);
    }

    @Test void pureAndLowerPackagesDependOnNothingAboveThem() {
        noClasses().that().resideInAnyPackage(cat(PURE, "dev.gpuctl.inventory..", "dev.gpuctl.net.."))
            .should().dependOnClassesThat().resideInAnyPackage(
                "dev.gpuctl.cli..", "dev.gpuctl.workflow..", "dev.gpuctl.engine..", "dev.gpuctl.step..", "dev.gpuctl.steps..", "dev.gpuctl.remote..",
                "dev.gpuctl.workload..")
            .because("inventory, the parsers (text, hostfiles, kube, gpu, backup) and net are pure: no hosts, no engine")
            .check(classes);
        noClasses().that().resideInAnyPackage(cat(PURE, "dev.gpuctl.net.."))
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.inventory..")
            .because("parsers and CIDR math take plain values, so that the inventory may use them")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.net..")
            .should().dependOnClassesThat().resideInAnyPackage(PURE)
            .because("net is CIDR math only")
            .check(classes);
    }

    @Test void thePurePackagesEachUseOnlyThoseBelowIt() {
        noClasses().that().resideInAPackage("dev.gpuctl.text..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.hostfiles..", "dev.gpuctl.kube..", "dev.gpuctl.gpu..",
                "dev.gpuctl.backup..")
            .because("text and JSON helpers know no file format, no cluster and no GPU")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.hostfiles..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.kube..", "dev.gpuctl.gpu..", "dev.gpuctl.backup..")
            .because("a host's files and its tools' output are read without a cluster")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.kube..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.gpu..", "dev.gpuctl.backup..")
            .because("the Kubernetes readers know no GPU: the GPU parsers build on them, not the other way")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.backup..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.gpu..")
            .because("a backup is the control plane's (its archive, etcd's restore): no GPU in it")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.gpu..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.backup..")
            .because("GPU judgements need no backup")
            .check(classes);
    }

    private static String[] cat(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test void theStepVocabularyNamesNoConcreteStep() {
        noClasses().that().resideInAPackage("dev.gpuctl.step..")
            .should().dependOnClassesThat().resideInAnyPackage(
                "dev.gpuctl.steps..", "dev.gpuctl.engine..", "dev.gpuctl.workflow..", "dev.gpuctl.cli..", "dev.gpuctl.workload..")
            .because("dev.gpuctl.step says what a step is; the concrete steps and whoever runs them build on it")
            .check(classes);
    }

    @Test void onlyRemoteKnowsSsh() {
        noClasses().that().resideOutsideOfPackage("dev.gpuctl.remote..")
            .should().dependOnClassesThat().resideInAnyPackage("net.schmizz..", "com.hierynomus..")
            .because("steps know no sshj; Remote is the one door to a host")
            .check(classes);
    }

    @Test void oneEngineOwnsThePoolTheThreadsAndTheLogNaming() {
        noClasses().that().resideInAnyPackage("dev.gpuctl.cli..", "dev.gpuctl.workflow..", "dev.gpuctl.engine..", "dev.gpuctl.step..",
                "dev.gpuctl.steps..")
            .and().doNotHaveFullyQualifiedName("dev.gpuctl.engine.HostRun")
            .should().dependOnClassesThat().belongToAnyOf(java.util.concurrent.Executors.class, java.util.concurrent.ExecutorService.class)
            .because("bootstrap, dry-run, verify and every day-2 command run on the one engine: its pool is HostRun's")
            .check(classes);
        noClasses().that().doNotHaveFullyQualifiedName("dev.gpuctl.engine.HostRun")
            .should().callMethod(dev.gpuctl.engine.StateDir.class, "newRunDir", java.nio.file.Path.class, String.class)
            .because("a run's log directory and its per-host logs are named in one place, HostRun")
            .check(classes);
    }

    @Test void onlyTheEngineMakesRunnersAndTakesTheLock() {
        noClasses().that().resideOutsideOfPackage("dev.gpuctl.engine..")
            .should().callConstructor(dev.gpuctl.engine.Runner.class, dev.gpuctl.inventory.Inventory.class,
                java.util.function.Function.class, java.io.PrintWriter.class, dev.gpuctl.engine.Runner.Options.class)
            .because("a command is a workflow that Workflows.run hands to the engine: one session, one lock, one log directory")
            .check(classes);
        noClasses().that().resideOutsideOfPackage("dev.gpuctl.engine..")
            .should().callMethod(dev.gpuctl.engine.Runner.class, "lockingMaster", String.class)
            .orShould().callMethod(dev.gpuctl.engine.MasterLock.class, "acquire", dev.gpuctl.remote.Remote.class, String.class,
                java.time.Duration.class)
            .because("the cluster's lock is the session's: taken by the runner before its first change, held to its end")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.cli..")
            .should().callMethod(dev.gpuctl.engine.Runner.class, "run", java.util.List.class)
            .orShould().callMethod(dev.gpuctl.engine.Runner.class, "run", dev.gpuctl.engine.Rounds.class)
            .because("cli parses options and calls Workflows.run(workflow)")
            .check(classes);
    }

    @Test void noPackageCycles() {
        slices().matching("dev.gpuctl.(*)..").should().beFreeOfCycles().check(classes);
    }
}
