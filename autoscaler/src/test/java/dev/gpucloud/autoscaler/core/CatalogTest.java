package dev.gpucloud.autoscaler.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class CatalogTest {

    private static InstanceType type(String name, int gpus, double onDemand) {
        return new InstanceType(name, "A100-SXM4-40GB", gpus, true, onDemand, onDemand / 2, List.of("z1"));
    }

    @Test
    void the_aws_catalog_knows_the_common_gpu_types() {
        Catalog aws = Catalog.aws();
        assertThat(aws.require("p4d.24xlarge")).satisfies(t -> {
            assertThat(t.gpus()).isEqualTo(8);
            assertThat(t.gpuModel()).isEqualTo("A100-SXM4-40GB");
            assertThat(t.rdma()).isTrue();
            assertThat(t.onDemandUsdPerHour()).isEqualTo(32.7726);
            assertThat(t.spotUsdPerHour()).isLessThan(t.onDemandUsdPerHour());
        });
        assertThat(aws.require("p4de.24xlarge").gpuModel()).isEqualTo("A100-SXM4-80GB");
        assertThat(aws.require("p4de.24xlarge").offersSpot()).isFalse();
        assertThat(aws.require("p5.48xlarge").gpuModel()).startsWith("H100");
        assertThat(aws.require("g5.xlarge").gpus()).isEqualTo(1);
        assertThat(aws.require("g5.12xlarge").gpus()).isEqualTo(4);
        assertThat(aws.require("g5.48xlarge").gpus()).isEqualTo(8);
        assertThat(aws.require("g5.48xlarge").rdma()).isFalse();
        assertThat(aws.require("p3.2xlarge").gpus()).isEqualTo(1);
        assertThat(aws.require("p3.8xlarge").gpus()).isEqualTo(4);
        assertThat(aws.require("p3.16xlarge").gpus()).isEqualTo(8);
        assertThat(aws.require("g4dn.xlarge").gpuModel()).isEqualTo("T4");
        assertThat(aws.require("g6.xlarge").gpuModel()).isEqualTo("L4");
        assertThat(aws.types()).extracting(InstanceType::name).isSorted();
    }

    @Test
    void a_model_family_accepts_its_variants_and_nothing_that_only_starts_alike() {
        Catalog aws = Catalog.aws();
        assertThat(aws.require("p4d.24xlarge").hasModel("A100")).isTrue();
        assertThat(aws.require("p4de.24xlarge").hasModel("a100")).isTrue();
        assertThat(aws.require("p4de.24xlarge").hasModel("A100-SXM4-80GB")).isTrue();
        assertThat(aws.require("p4d.24xlarge").hasModel("A100-SXM4-80GB")).isFalse();
        assertThat(aws.require("g6e.xlarge").hasModel("L4")).isFalse();
        assertThat(aws.require("g6.xlarge").hasModel("L4")).isTrue();
    }

    @Test
    void a_duplicate_name_is_refused() {
        assertThatThrownBy(() -> Catalog.of(List.of(type("x", 8, 1), type("x", 4, 1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("x twice");
    }

    @Test
    void a_type_without_gpus_or_with_a_negative_price_is_refused() {
        assertThatThrownBy(() -> type("none", 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("gpus of none");
        assertThatThrownBy(() -> type("neg", 8, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("onDemandUsdPerHour of neg");
        assertThatThrownBy(() -> new InstanceType("s", "T4", 1, false, 1, -0.1, List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spotUsdPerHour of s");
        assertThatThrownBy(() -> new InstanceType(" ", "T4", 1, false, 1, 0.1, List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
    }

    @Test
    void an_unknown_name_is_named_in_the_error() {
        assertThat(Catalog.aws().find("x9.large")).isEmpty();
        assertThatThrownBy(() -> Catalog.aws().require("x9.large")).hasMessageContaining("x9.large");
    }
}
