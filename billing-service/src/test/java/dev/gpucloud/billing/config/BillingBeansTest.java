package dev.gpucloud.billing.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.SkuRate;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Not a @QuarkusTest: turning configuration into a catalog is a method call. */
class BillingBeansTest {

    private final BillingBeans beans = new BillingBeans();

    @Test
    void the_builtin_catalog_is_the_default() {
        PriceCatalog catalog = beans.catalog(config("builtin", null, null));

        assertThat(catalog.rate(Sku.wholeGpu(GpuModels.A100_SXM4_40GB), CapacityType.ON_DEMAND))
                .isEqualTo(SkuRate.priced(2_745_000));
    }

    @Test
    void a_catalog_file_replaces_the_builtin_prices_and_overrides_apply_on_top(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("catalog.txt");
        Files.writeString(file, "# our own prices\nA100-SXM4-40GB/ON_DEMAND=2000000\nA100-SXM4-40GB/SPOT=800000\n");

        PriceCatalog catalog = beans.catalog(config(file.toString(), "A100-SXM4-40GB/SPOT=700000", 1_000_000L));

        assertThat(catalog.size()).isEqualTo(2);
        assertThat(catalog.rate(Sku.wholeGpu(GpuModels.A100_SXM4_40GB), CapacityType.SPOT)).isEqualTo(SkuRate.priced(700_000));
        assertThat(catalog.rate(Sku.wholeGpu(GpuModels.H100_SXM5_80GB), CapacityType.ON_DEMAND).microsPerHour())
                .isEqualTo(1_000_000);
    }

    @Test
    void a_bad_override_stops_startup_naming_the_property() {
        assertThatThrownBy(() -> beans.catalog(config("builtin", "A100-SXM4-40GB/SPOT=cheap", null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gpucloud.billing.catalog-overrides")
                .hasMessageContaining("'cheap' is not a whole number");
    }

    @Test
    void a_missing_catalog_file_stops_startup_naming_the_property() {
        assertThatThrownBy(() -> beans.catalog(config("/nonexistent/catalog.txt", null, null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gpucloud.billing.catalog-location");
    }

    private static BillingConfig config(String location, String overrides, Long defaultRate) {
        return new BillingConfig() {
            @Override
            public long minimumBillableSeconds() {
                return 60;
            }

            @Override
            public String catalogLocation() {
                return location;
            }

            @Override
            public Optional<String> catalogOverrides() {
                return Optional.ofNullable(overrides);
            }

            @Override
            public Optional<Long> defaultRateMicrosPerGpuHour() {
                return Optional.ofNullable(defaultRate);
            }

            @Override
            public Duration databaseRetryWindow() {
                return Duration.ofMinutes(5);
            }
        };
    }
}
