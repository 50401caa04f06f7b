package dev.gpucloud.scheduler.service.leader;

import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Who leads, for operators and scripts: {@code GET /scheduler/leader} answers this instance's name and
 * role and the leader as last read ({@code ./gpucloud status} shows it), and readiness carries the same.
 * Readiness is UP on a leader once its takeover has finished, and on a standby that knows a leader whose
 * lease runs (it answers reads and sends writers there); DOWN while this instance takes over or while no
 * instance holds the lease, so that a load balancer or {@code ./gpucloud up} does not send work to an
 * instance that can neither do it nor name who can.
 */
@Readiness
@ApplicationScoped
public class LeaderEndpoint implements HealthCheck {

    private final LeaderState state;

    public LeaderEndpoint(LeaderState state) {
        this.state = state;
    }

    void install(@Observes Router router) {
        router.get("/scheduler/leader").handler(ctx -> ctx.response()
                .putHeader("content-type", "application/json")
                .end(describe().encode()));
    }

    JsonObject describe() {
        LeaderState.Leader l = state.leader();
        JsonObject leader = l == null ? null : new JsonObject().put("instance", l.instance()).put("address", l.address())
                .put("epoch", l.epoch()).put("leaseUntil", l.leaseUntil() == null ? null : l.leaseUntil().toString());
        return new JsonObject()
                .put("instance", state.instance())
                .put("address", state.address())
                .put("role", state.leads() ? "leader" : "standby")
                .put("epoch", state.leads() ? state.epoch() : l == null ? 0 : l.epoch())
                .put("leader", leader);
    }

    @Override
    public HealthCheckResponse call() {
        LeaderState.Leader l = state.leader();
        var response = HealthCheckResponse.named("leader election")
                .withData("instance", state.instance())
                .withData("role", state.leads() ? "leader" : "standby")
                .withData("leader", l == null ? "none" : l.instance() + " at " + l.address() + " (epoch " + l.epoch() + ")")
                .status(state.ready());
        if (!state.ready()) {
            response.withData("reason", state.leads() ? "taking over: rebuilding its state"
                    : "no instance holds the lease now (a failover or a start is under way)");
        }
        return response.build();
    }
}
