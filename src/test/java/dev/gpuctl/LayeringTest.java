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
 * cli ──▶ engine ──▶ steps ──▶ remote
 *  └──▶ inventory, workload        (workload reads the cluster through a Remote)
 * everything may use hostconf (pure parsers) and net (CIDR math); inventory is pure records
 * </pre>
 * and the engine is one: its pool and its run directory are HostRun's alone.
 * A rule here is the design, not a description of today's code: a failure is a dependency to move.
 */
class LayeringTest {
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
            .layer("engine").definedBy("dev.gpuctl.engine..")
            .layer("workload").definedBy("dev.gpuctl.workload..")
            .layer("steps").definedBy("dev.gpuctl.steps..")
            .layer("remote").definedBy("dev.gpuctl.remote..")
            .layer("inventory").definedBy("dev.gpuctl.inventory..")
            .layer("hostconf").definedBy("dev.gpuctl.hostconf..")
            .layer("net").definedBy("dev.gpuctl.net..")
            .whereLayer("cli").mayNotBeAccessedByAnyLayer()
            .whereLayer("engine").mayOnlyBeAccessedByLayers("cli")
            .whereLayer("workload").mayOnlyBeAccessedByLayers("cli")
            // the step classes and their lists are the engine's: a command names steps only through the engine
            .whereLayer("steps").mayOnlyBeAccessedByLayers("engine")
            .whereLayer("remote").mayOnlyBeAccessedByLayers("steps", "engine", "workload", "cli")
            .whereLayer("inventory").mayOnlyBeAccessedByLayers("cli", "engine", "workload", "steps", "remote")
            .check(classes);
    }

    @Test void pureAndLowerPackagesDependOnNothingAboveThem() {
        noClasses().that().resideInAnyPackage("dev.gpuctl.inventory..", "dev.gpuctl.hostconf..", "dev.gpuctl.net..")
            .should().dependOnClassesThat().resideInAnyPackage(
                "dev.gpuctl.cli..", "dev.gpuctl.engine..", "dev.gpuctl.steps..", "dev.gpuctl.remote..", "dev.gpuctl.workload..")
            .because("inventory, hostconf and net are pure: no hosts, no engine")
            .check(classes);
        noClasses().that().resideInAnyPackage("dev.gpuctl.hostconf..", "dev.gpuctl.net..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.inventory..")
            .because("parsers and CIDR math take plain values, so that the inventory may use them")
            .check(classes);
        noClasses().that().resideInAPackage("dev.gpuctl.net..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.gpuctl.hostconf..")
            .because("net is CIDR math only")
            .check(classes);
    }

    @Test void onlyRemoteKnowsSsh() {
        noClasses().that().resideOutsideOfPackage("dev.gpuctl.remote..")
            .should().dependOnClassesThat().resideInAnyPackage("net.schmizz..", "com.hierynomus..")
            .because("steps know no sshj; Remote is the one door to a host")
            .check(classes);
    }

    @Test void oneEngineOwnsThePoolTheThreadsAndTheLogNaming() {
        noClasses().that().resideInAnyPackage("dev.gpuctl.cli..", "dev.gpuctl.engine..", "dev.gpuctl.steps..")
            .and().doNotHaveFullyQualifiedName("dev.gpuctl.engine.HostRun")
            .should().dependOnClassesThat().belongToAnyOf(java.util.concurrent.Executors.class, java.util.concurrent.ExecutorService.class)
            .because("bootstrap, dry-run, verify and every day-2 command run on the one engine: its pool is HostRun's")
            .check(classes);
        noClasses().that().doNotHaveFullyQualifiedName("dev.gpuctl.engine.HostRun")
            .should().callMethod(dev.gpuctl.engine.StateDir.class, "newRunDir", java.nio.file.Path.class, String.class)
            .because("a run's log directory and its per-host logs are named in one place, HostRun")
            .check(classes);
    }

    @Test void noPackageCycles() {
        slices().matching("dev.gpuctl.(*)..").should().beFreeOfCycles().check(classes);
    }
}
