package dev.gpuctl.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpuctl.inventory.InventoryLoader;
import dev.gpuctl.steps.Steps;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The rendered plan of inventory.example.yaml, compared with a reviewed golden file: every command and file
 * content bootstrap would run and write. After an intended change, regenerate with
 * {@code mvn test -Dtest=PlanGoldenTest -Dgolden.update=true}, then review the diff before committing it.
 */
class PlanGoldenTest {
    static final Path GOLDEN = Path.of("src/test/resources/golden/plan-inventory.example.txt");

    @Test void exampleInventoryPlanMatchesTheReviewedGoldenFile() throws IOException {
        // a fixed HOME: the same plan on every machine (and no ~/.ssh/config of the one running the test)
        var inv = InventoryLoader.load(Path.of("inventory.example.yaml"), java.util.Map.of("HOME", "/home/admin"));
        String actual = PlanText.render(Plan.of(inv, Steps.phases()), inv);
        if (Boolean.getBoolean("golden.update")) Files.writeString(GOLDEN, actual, StandardCharsets.UTF_8);
        assertEquals(Files.readString(GOLDEN, StandardCharsets.UTF_8), actual,
            "the plan changed: if intended, regenerate with -Dgolden.update=true and review the diff");
    }
}
