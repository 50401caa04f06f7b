package dev.gpucloud.scheduler.service.health;

import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Readiness that tells whether the scheduler schedules: DOWN, saying why, when no scheduling pass has
 * completed for {@code gpucloud.scheduler.pass-stall-after} while jobs wait. Exported as
 * {@code gpucloud_scheduler_pass_age_seconds} and {@code gpucloud_scheduler_pass_stalled} for the alert.
 */
@Readiness
@ApplicationScoped
public class PassReadiness implements HealthCheck {

    private final SchedulerEngine engine;
    private final SchedulerConfig config;

    public PassReadiness(SchedulerEngine engine, SchedulerConfig config, MeterRegistry registry) {
        this.engine = engine;
        this.config = config;
        Gauge.builder("gpucloud.scheduler.pass.age", this, r -> r.ageMillis(System.currentTimeMillis()) / 1000.0)
                .baseUnit("seconds").description("Time since the last scheduling pass completed")
                .register(registry);
        Gauge.builder("gpucloud.scheduler.pass.stalled", this, r -> r.stalled(System.currentTimeMillis()) ? 1 : 0)
                .description("1 while no pass has completed for pass-stall-after and jobs wait").register(registry);
    }

    private long ageMillis(long now) {
        return Math.max(0, now - engine.passProgress().lastCompletedMillis());
    }

    boolean stalled(long now) {
        return stalled(engine.passProgress(), now, config.passStallAfter().toMillis());
    }

    /** Stalled: jobs wait and no pass has completed for longer than {@code stallAfterMillis}. */
    static boolean stalled(SchedulerEngine.PassProgress p, long now, long stallAfterMillis) {
        return p.pendingJobs() > 0 && now - p.lastCompletedMillis() > stallAfterMillis;
    }

    @Override
    public HealthCheckResponse call() {
        long now = System.currentTimeMillis();
        SchedulerEngine.PassProgress p = engine.passProgress();
        var response = HealthCheckResponse.named("scheduling passes")
                .withData("secondsSinceLastPass", ageMillis(now) / 1000)
                .withData("pendingJobs", p.pendingJobs());
        if (!stalled(now)) {
            return response.up().build();
        }
        return response.down().withData("reason", "no scheduling pass has completed for " + ageMillis(now) / 1000
                + " s while " + p.pendingJobs() + " job(s) wait" + (p.lastFailure() == null ? ""
                        : "; last failure: " + p.lastFailure())).build();
    }
}
