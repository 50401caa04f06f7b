package dev.gpucloud.scheduler.service.console;

import dev.gpucloud.contracts.events.JobState;
import dev.gpucloud.contracts.events.Tenants;
import dev.gpucloud.contracts.events.WorkerPlacement;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import dev.gpucloud.identity.Caller;
import dev.gpucloud.scheduler.service.config.ConsoleConfig;
import dev.gpucloud.scheduler.service.config.SchedulerConfig;
import dev.gpucloud.scheduler.service.engine.ClusterSnapshot;
import dev.gpucloud.scheduler.service.engine.JobQueries;
import dev.gpucloud.scheduler.service.engine.JobView;
import dev.gpucloud.scheduler.service.engine.SchedulerEngine;
import dev.gpucloud.scheduler.service.engine.TenantUsageView;
import dev.gpucloud.scheduler.service.grpc.Access;
import dev.gpucloud.scheduler.service.grpc.PageTokens;
import io.quarkus.qute.Engine;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.MultiMap;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The console's pages with data: the jobs list, one job, the tenant's quota and cost. Each reads through the same
 * queries and access rules as the API (JobQueries, Access), in a bounded number of statements: the list is one
 * keyset-paged query on {@code jobs_tenant_recent} plus one for the page's workers, a job two, the tenant page one
 * turn of the engine and one call to billing.
 */
@ApplicationScoped
public class ConsolePages {

    /** A rendered answer: its HTTP status and HTML. */
    record Page(int status, String html) {
    }

    /** A signed-in request: who, and the token they came with (for billing, which checks it itself). */
    record Session(Caller caller, String token) {
        String who() {
            return caller.describe();
        }
    }

    /** One choice of the state filter. */
    @TemplateData
    record StateChoice(String name, boolean selected) {
    }

    private final JobQueries queries;
    private final SchedulerEngine engine;
    private final SchedulerConfig scheduler;
    private final ConsoleConfig config;
    private final BillingCosts billing;
    private final PageTokens pageTokens;
    private final Engine templates;

    public ConsolePages(JobQueries queries, SchedulerEngine engine, SchedulerConfig scheduler, ConsoleConfig config,
            BillingCosts billing, Engine templates) {
        this.queries = queries;
        this.engine = engine;
        this.scheduler = scheduler;
        this.config = config;
        this.billing = billing;
        this.templates = templates;
        this.pageTokens = new PageTokens(scheduler.pageTokenSecret());
    }

    TemplateInstance template(String name) {
        return templates.getTemplate("console/" + name + ".html").instance();
    }

    /** {@code /console/jobs?state=S&tenant=T&size=N&after=TOKEN}: a page of jobs, newest first. */
    Uni<Page> jobs(Session session, MultiMap params) {
        String named = tenantParam(params);
        String tenant = Access.listingTenant(session.caller(), named.isEmpty() ? defaultTenant(session.caller())
                : named);
        List<JobState> states = states(params.getAll("state"));
        int size = size(params.get("size"));
        String after = params.get("after");
        PageTokens.Cursor cursor = pageTokens.parse(after == null ? "" : after);
        return queries.list(tenant, states, size + 1, cursor == null ? null : cursor.submittedAt(),
                cursor == null ? null : cursor.jobId()).map(page -> {
                    List<ConsoleViews.JobRow> rows = page.stream().limit(size).map(ConsoleViews.JobRow::of).toList();
                    String next = null;
                    StringBuilder keep = new StringBuilder();
                    states.forEach(s -> keep.append("&state=").append(s.name()));
                    if (!named.isEmpty()) {
                        keep.append("&tenant=").append(url(named));
                    }
                    if (params.get("size") != null) {
                        keep.append("&size=").append(size);
                    }
                    if (page.size() > size) {
                        JobView last = page.get(size - 1);
                        next = "/console/jobs?after=" + pageTokens.issue(last.submittedAt(), last.jobId()) + keep;
                    }
                    String first = cursor == null ? null
                            : "/console/jobs" + (keep.length() == 0 ? "" : "?" + keep.substring(1));
                    Set<JobState> chosen = Set.copyOf(states);
                    List<StateChoice> choices = new ArrayList<>();
                    for (JobState s : JobState.values()) {
                        choices.add(new StateChoice(s.name(), chosen.contains(s)));
                    }
                    return new Page(200, template("jobs").data("who", session.who())
                            .data("tenant", tenant == null ? "every tenant" : tenant).data("tenantParam", named)
                            .data("jobs", rows).data("states", choices).data("filtered", !states.isEmpty())
                            .data("next", next).data("first", first).render());
                });
    }

    /** {@code /console/jobs/ID}: what the job asks, where it stands and why, where it runs, and its live output. */
    Uni<Page> job(Session session, String jobId, MultiMap params) {
        String id = jobId(jobId);
        Integer rank = rank(params.get("rank"));
        String stream = stream(params.get("stream"));
        return queries.get(id).map(job -> Access.readable(session.caller(), job)).flatMap(job -> hosts(job)
                .map(hosts -> {
                    StringBuilder logs = new StringBuilder("/console/jobs/").append(url(job.jobId())).append("/logs");
                    List<String> q = new ArrayList<>();
                    if (rank != null) {
                        q.add("rank=" + rank);
                    }
                    if (stream != null) {
                        q.add("stream=" + stream);
                    }
                    if (!q.isEmpty()) {
                        logs.append('?').append(String.join("&", q));
                    }
                    return new Page(200, template("job").data("who", session.who()).data("job",
                                    ConsoleViews.JobRow.of(job)).data("tenant", job.tenant())
                            .data("fields", ConsoleViews.specFields(job))
                            .data("exitCode", job.exitCode() == null ? "" : String.valueOf(job.exitCode()))
                            .data("resumeFrom", job.resumeFrom() == null ? "" : job.resumeFrom())
                            .data("placement", job.placement().stream().map(ConsoleViews.PlacementRow::of).toList())
                            .data("hosts", hosts.hosts()).data("gpus", hosts.gpus()).data("hostsNote", hosts.note())
                            .data("rank", rank == null ? "" : String.valueOf(rank))
                            .data("stream", stream == null ? "" : stream).data("logsUrl", logs.toString()).render());
                }));
    }

    /** The hosts and GPUs of a job's placement, from the leader's model; a standby says it does not know them. */
    record Hosts(List<ConsoleViews.HostRow> hosts, List<ConsoleViews.GpuRow> gpus, String note) {
    }

    private Uni<Hosts> hosts(JobView job) {
        if (job.placement().isEmpty()) {
            return Uni.createFrom().item(new Hosts(List.of(), List.of(), ""));
        }
        Set<String> nodes = new TreeSet<>();
        job.placement().forEach(w -> nodes.add(w.nodeId()));
        return engine.cluster().map(cluster -> {
            List<ConsoleViews.HostRow> hosts = new ArrayList<>();
            List<ConsoleViews.GpuRow> gpus = new ArrayList<>();
            for (ClusterSnapshot.NodeView n : cluster.nodes()) {
                if (!nodes.contains(n.nodeId())) {
                    continue;
                }
                hosts.add(ConsoleViews.HostRow.of(n));
                Set<Integer> held = new TreeSet<>();
                for (WorkerPlacement w : job.placement()) {
                    if (w.nodeId().equals(n.nodeId())) {
                        held.addAll(w.gpuIndices());
                    }
                }
                n.gpus().stream().filter(g -> held.contains(g.index()))
                        .forEach(g -> gpus.add(ConsoleViews.GpuRow.of(n.nodeId(), g)));
            }
            String note = hosts.size() < nodes.size() ? "some of the job's hosts are no longer in the fleet" : "";
            return new Hosts(hosts, gpus, note);
        }).onFailure().recoverWithItem(failure -> new Hosts(List.of(), List.of(),
                "this scheduler instance is a standby: only the leader knows the hosts' state"));
    }

    /** {@code /console/tenant?tenant=T}: the tenant's quota and use (for who may read them) and this month's cost. */
    Uni<Page> tenant(Session session, MultiMap params) {
        String named = tenantParam(params);
        Caller caller = session.caller();
        String tenant = named.isEmpty() ? defaultTenant(caller) : named;
        if (tenant.isEmpty()) {
            throw new IllegalArgumentException("name the tenant: /console/tenant?tenant=T (the token of "
                    + caller.describe() + " names no single tenant)");
        }
        if (!caller.readsJobsOf(tenant) && !caller.readsInvoicesOf(tenant) && !caller.readsUsageOf(tenant)) {
            throw Access.denied(caller.describe() + " may not look at tenant '" + tenant + "'");
        }
        Uni<TenantUsageView> usage;
        String usageNote = "";
        if (caller.readsUsageOf(tenant)) {
            usage = engine.tenantUsage(tenant).onFailure().recoverWithNull();
        } else {
            usage = Uni.createFrom().nullItem();
            usageNote = "the quota and what the tenant's jobs hold are shown to its tenant-admins, finance and"
                    + " operators, as the API's GetTenantUsage";
        }
        Uni<BillingCosts.Cost> cost = caller.readsInvoicesOf(tenant) ? billing.current(tenant, session.token())
                : Uni.createFrom().item(BillingCosts.Cost.unavailable("your role does not read this tenant's"
                        + " invoices"));
        String note = usageNote;
        return Uni.combine().all().unis(usage, cost).asTuple().map(t -> {
            TenantUsageView u = t.getItem1();
            String shownNote = u == null && note.isEmpty()
                    ? "only the scheduler's leader knows the quota's use; this instance is a standby" : note;
            return new Page(200, template("tenant").data("who", session.who()).data("tenant", tenant)
                    .data("usage", u == null ? null : Quota.of(u)).data("usageNote", shownNote)
                    .data("cost", t.getItem2()).render());
        });
    }

    /** A tenant's quota as the page shows it, in GPUs. */
    @TemplateData
    record Quota(String soft, String hard, int runningJobs, String running, int pendingJobs, String pending,
            String share, int weight) {
        static Quota of(TenantUsageView u) {
            return new Quota(gpus(u.softQuotaMilli()), gpus(u.hardQuotaMilli()), u.runningJobs(),
                    gpus(u.runningMilli()), u.pendingJobs(), gpus(u.pendingMilli()),
                    String.format(Locale.ROOT, "%.1f %%", u.dominantShare() * 100), u.weight());
        }

        private static String gpus(long milli) {
            return milli == 0 ? "0" : String.format(Locale.ROOT, "%.3f", milli / 1000.0).replaceAll("\\.?0+$", "");
        }
    }

    /** The tenant a page shows when none is named: the caller's only one, else the first of several, else none. */
    static String defaultTenant(Caller caller) {
        if (caller.unrestricted() || caller.tenants().isEmpty()) {
            return "";
        }
        return new TreeSet<>(caller.tenants()).first();
    }

    static String tenantParam(MultiMap params) {
        String named = params.get("tenant");
        if (named == null || named.isEmpty()) {
            return "";
        }
        return Tenants.require(named, "tenant");
    }

    static List<JobState> states(List<String> given) {
        List<JobState> states = new ArrayList<>();
        if (given.size() > JobState.values().length) {
            throw new IllegalArgumentException("at most " + JobState.values().length + " 'state' filters");
        }
        for (String s : given) {
            if (s == null || s.isEmpty()) {
                continue;
            }
            try {
                JobState state = JobState.valueOf(s.strip().toUpperCase(Locale.ROOT));
                if (!states.contains(state)) {
                    states.add(state);
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'state' must be one of " + java.util.Arrays.toString(
                        JobState.values()) + ", was '" + Check.clip(s) + "'");
            }
        }
        return states;
    }

    int size(String given) {
        if (given == null || given.isEmpty()) {
            return Math.min(config.pageSize(), scheduler.maxPageSize());
        }
        try {
            int size = Integer.parseInt(given);
            if (size >= 1 && size <= scheduler.maxPageSize()) {
                return size;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("'size' must be a number within 1.." + scheduler.maxPageSize() + ", was '"
                + Check.clip(given) + "'");
    }

    static String jobId(String given) {
        String id = Check.text(given, Limits.ID, "job id");
        if (!id.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw new IllegalArgumentException("'" + Check.clip(id) + "' is not a job id (job-...)");
        }
        return id;
    }

    static Integer rank(String given) {
        if (given == null || given.isEmpty()) {
            return null;
        }
        try {
            int rank = Integer.parseInt(given);
            if (rank >= 0 && rank < Limits.WORKERS.max()) {
                return rank;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("'rank' must be a worker's rank within 0.." + (Limits.WORKERS.max() - 1)
                + ", was '" + Check.clip(given) + "'");
    }

    /** stdout, stderr, or both (null). */
    static String stream(String given) {
        if (given == null || given.isEmpty()) {
            return null;
        }
        String s = given.toLowerCase(Locale.ROOT);
        if (s.equals("stdout") || s.equals("stderr")) {
            return s;
        }
        throw new IllegalArgumentException("'stream' must be stdout or stderr, was '" + Check.clip(given) + "'");
    }

    static String url(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
