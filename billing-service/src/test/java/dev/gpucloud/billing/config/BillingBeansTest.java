package dev.gpucloud.billing.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.gpucloud.contracts.events.GpuModels;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.ReservedCommitment;
import dev.gpucloud.billing.fold.SkuRate;
import dev.gpucloud.contracts.events.CapacityType;
import dev.gpucloud.contracts.events.Sku;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Not a @QuarkusTest: turning configuration into a catalog is a method call. */
class BillingBeansTest {

    private final BillingBeans beans = new BillingBeans();

    @Test
    void the_builtin_catalog_is_the_default() {
        PriceCatalog catalog = beans.catalog(config("builtin", null));

        assertThat(catalog.rate(Sku.wholeGpu(GpuModels.A100_SXM4_40GB), CapacityType.ON_DEMAND))
                .isEqualTo(SkuRate.priced(2_745_000));
    }

    @Test
    void a_catalog_file_replaces_the_builtin_prices_and_overrides_apply_on_top(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("catalog.txt");
        Files.writeString(file, "# our own prices\nA100-SXM4-40GB/ON_DEMAND=2000000\nA100-SXM4-40GB/SPOT=800000\n");

        PriceCatalog catalog = beans.catalog(config(file.toString(), "A100-SXM4-40GB/SPOT=700000"));

        assertThat(catalog.size()).isEqualTo(2);
        assertThat(catalog.rate(Sku.wholeGpu(GpuModels.A100_SXM4_40GB), CapacityType.SPOT)).isEqualTo(SkuRate.priced(700_000));
        // the file replaced the built-in prices: an H100 is unknown now, so its usage is held
        assertThat(catalog.rate(Sku.wholeGpu(GpuModels.H100_SXM5_80GB), CapacityType.ON_DEMAND).isHeld()).isTrue();
    }

    @Test
    void a_catalog_file_can_date_its_prices(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("catalog.txt");
        Files.writeString(file, """
                A100-SXM4-40GB/ON_DEMAND=2745000
                # spot from 1 July 2025, repriced at noon on 15 July
                A100-SXM4-40GB/SPOT@2025-07-01=1100000
                A100-SXM4-40GB/SPOT@2025-07-15T12:00:00Z=900000
                """);

        PriceCatalog catalog = beans.catalog(config(file.toString(), "A100-SXM4-40GB/ON_DEMAND@2025-08-01=2500000"));

        Sku a100 = Sku.wholeGpu(GpuModels.A100_SXM4_40GB);
        assertThat(catalog.size()).isEqualTo(4);
        assertThat(catalog.rate(a100, CapacityType.SPOT, Instant.parse("2025-07-10T00:00:00Z")))
                .isEqualTo(SkuRate.priced(1_100_000));
        assertThat(catalog.rate(a100, CapacityType.SPOT, Instant.parse("2025-07-20T00:00:00Z")))
                .isEqualTo(SkuRate.priced(900_000));
        assertThat(catalog.rate(a100, CapacityType.ON_DEMAND, Instant.parse("2025-07-20T00:00:00Z")))
                .isEqualTo(SkuRate.priced(2_745_000));
        assertThat(catalog.rate(a100, CapacityType.ON_DEMAND)).isEqualTo(SkuRate.priced(2_500_000));
    }

    @Test
    void commitments_are_read_from_configuration() {
        List<ReservedCommitment> commitments = beans.commitments(config("builtin", null,
                "acme/A100-SXM4-40GB/2025-06..2025-12=100@1840000, acme/H100-SXM5-80GB/mig-1g.10gb/2025-06=10@500000"));

        assertThat(commitments).containsExactly(
                new ReservedCommitment("acme", "A100-SXM4-40GB", 100, 1_840_000, YearMonth.of(2025, 6), YearMonth.of(2025, 12)),
                new ReservedCommitment("acme", "H100-SXM5-80GB/mig-1g.10gb", 10, 500_000, YearMonth.of(2025, 6),
                        YearMonth.of(2025, 6)));
        assertThat(beans.commitments(config("builtin", null))).isEmpty();
    }

    @Test
    void overlapping_commitments_stop_startup_naming_the_property() {
        assertThatThrownBy(() -> beans.commitments(config("builtin", null,
                "acme/A100-SXM4-40GB/2025-06..2025-12=100@1840000, acme/A100-SXM4-40GB/2025-12=1@1")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gpucloud.billing.commitments")
                .hasMessageContaining("overlap");
    }

    @Test
    void a_bad_override_stops_startup_naming_the_property() {
        assertThatThrownBy(() -> beans.catalog(config("builtin", "A100-SXM4-40GB/SPOT=cheap")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gpucloud.billing.catalog-overrides")
                .hasMessageContaining("'cheap' is not a whole number");
    }

    @Test
    void a_missing_catalog_file_stops_startup_naming_the_property() {
        assertThatThrownBy(() -> beans.catalog(config("/nonexistent/catalog.txt", null)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gpucloud.billing.catalog-location");
    }

    private static BillingConfig config(String location, String overrides) {
        return config(location, overrides, null);
    }

    private static BillingConfig config(String location, String overrides, String commitments) {
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
            public Duration closeGrace() {
                return Duration.ofDays(3);
            }

            @Override
            public Duration closeCheckInterval() {
                return Duration.ofMinutes(1);
            }

            @Override
            public Duration maxReportLength() {
                return Duration.ofHours(24);
            }

            @Override
            public String advisorSpotEligibleJobs() {
                return ".*train.*";
            }

            @Override
            public int advisorSpotPricePercent() {
                return 30;
            }

            @Override
            public int advisorReservedPricePercent() {
                return 60;
            }

            @Override
            public int advisorHistoryMonths() {
                return 12;
            }

            @Override
            public Optional<String> commitments() {
                return Optional.ofNullable(commitments);
            }

            @Override
            public Duration databaseRetryWindow() {
                return Duration.ofMinutes(5);
            }

            @Override
            public Ingest ingest() {
                return new Ingest() {
                    @Override
                    public Duration stallAfter() {
                        return Duration.ofMinutes(10);
                    }

                    @Override
                    public Duration lagSampleInterval() {
                        return Duration.ofSeconds(15);
                    }
                };
            }

            @Override
            public Fold fold() {
                return new Fold() {
                    @Override
                    public Duration snapshotInterval() {
                        return Duration.ofSeconds(1);
                    }

                    @Override
                    public int snapshotEvents() {
                        return 200_000;
                    }

                    @Override
                    public int maxKnownAllocations() {
                        return 500_000;
                    }
                };
            }
        };
    }
}
