package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.List;

/**
 * AWS EC2's NVIDIA GPU instance types as the built-in catalog.
 *
 * <p>On-demand prices: Linux, US East (N. Virginia), from AWS's public price list at
 * https://aws.amazon.com/ec2/pricing/on-demand/ as listed in early 2025 (before the reduction AWS announced on
 * 2025-06-05 for P4d, P4de and P5, which lowers those three). They were transcribed, not fetched by this build:
 * this machine could not reach the page on 2026-12-08, so check them against the page before billing anyone.
 *
 * <p>Spot prices are NOT AWS figures: they are illustrative, a typical fraction of on demand (0.40 for the P
 * families, 0.35 for the G families), because spot prices move by the hour and by zone. p4de has none here (AWS
 * sells it mostly as capacity blocks). Zones are illustrative too; the provider checks its own offerings.
 *
 * <p>{@code rdma} marks the types with EFA and GPUDirect RDMA (P3dn, P4d, P4de, P5), on which fabric gangs run.
 */
final class AwsCatalog {

    private static final double P_SPOT = 0.40;
    private static final double G_SPOT = 0.35;
    private static final List<String> ALL = List.of("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f");
    private static final List<String> P_ZONES = List.of("us-east-1a", "us-east-1b", "us-east-1c");

    static final Catalog CATALOG = Catalog.of(types());

    private AwsCatalog() {}

    private static List<InstanceType> types() {
        List<InstanceType> t = new ArrayList<>();
        // P: training. name, GPU model, GPUs, RDMA, on demand USD/h
        t.add(p("p3.2xlarge", "V100-SXM2-16GB", 1, false, 3.06));
        t.add(p("p3.8xlarge", "V100-SXM2-16GB", 4, false, 12.24));
        t.add(p("p3.16xlarge", "V100-SXM2-16GB", 8, false, 24.48));
        t.add(p("p3dn.24xlarge", "V100-SXM2-32GB", 8, true, 31.212));
        t.add(p("p4d.24xlarge", "A100-SXM4-40GB", 8, true, 32.7726));
        t.add(InstanceType.onDemandOnly("p4de.24xlarge", "A100-SXM4-80GB", 8, true, 40.9657, P_ZONES));
        t.add(p("p5.48xlarge", "H100-SXM5-80GB", 8, true, 98.32));
        // G: inference and small training.
        t.add(g("g4dn.xlarge", "T4", 1, 0.526));
        t.add(g("g4dn.2xlarge", "T4", 1, 0.752));
        t.add(g("g4dn.12xlarge", "T4", 4, 3.912));
        t.add(g("g4dn.metal", "T4", 8, 7.824));
        t.add(g("g5.xlarge", "A10G", 1, 1.006));
        t.add(g("g5.2xlarge", "A10G", 1, 1.212));
        t.add(g("g5.12xlarge", "A10G", 4, 5.672));
        t.add(g("g5.24xlarge", "A10G", 4, 8.144));
        t.add(g("g5.48xlarge", "A10G", 8, 16.288));
        t.add(g("g6.xlarge", "L4", 1, 0.8048));
        t.add(g("g6.12xlarge", "L4", 4, 4.6016));
        t.add(g("g6.48xlarge", "L4", 8, 13.3504));
        t.add(g("g6e.xlarge", "L40S", 1, 1.861));
        t.add(g("g6e.48xlarge", "L40S", 8, 30.13136));
        return t;
    }

    private static InstanceType p(String name, String model, int gpus, boolean rdma, double onDemand) {
        return new InstanceType(name, model, gpus, rdma, onDemand, round(onDemand * P_SPOT), P_ZONES);
    }

    private static InstanceType g(String name, String model, int gpus, double onDemand) {
        return new InstanceType(name, model, gpus, false, onDemand, round(onDemand * G_SPOT), ALL);
    }

    private static double round(double usd) {
        return Math.round(usd * 10_000) / 10_000.0;
    }
}
