package dev.gpucloud.identity;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CallerTest {

    @Test
    void each_role_may_what_the_issue_of_roles_says() {
        Caller member = Caller.of("alice", List.of("acme"), List.of("member"));
        Caller admin = Caller.of("ann", List.of("acme"), List.of("tenant-admin"));
        Caller finance = Caller.of("fin", List.of(), List.of("finance"));
        Caller operator = Caller.of("op", List.of(), List.of("operator"));
        Caller nobody = Caller.of("eve", List.of("acme"), List.of("viewer"));

        assertThat(member.actsFor("acme")).isTrue();
        assertThat(member.actsFor("globex")).isFalse();
        assertThat(member.readsJobsOf("globex")).isFalse();
        assertThat(member.readsInvoicesOf("acme")).isTrue();
        assertThat(member.readsUsageOf("acme")).isFalse();
        assertThat(admin.readsUsageOf("acme")).isTrue();
        assertThat(admin.readsUsageOf("globex")).isFalse();
        assertThat(finance.readsInvoicesOf("globex")).isTrue();
        assertThat(finance.readsJobsOf("globex")).isFalse();
        assertThat(finance.actsFor("globex")).isFalse();
        assertThat(operator.readsJobsOf("globex")).isTrue();
        assertThat(operator.readsEveryTenantsJobs()).isTrue();
        assertThat(operator.actsFor("globex")).isFalse();
        assertThat(finance.changesInvoices()).isTrue();
        assertThat(operator.changesInvoices()).isFalse();
        assertThat(admin.changesInvoices()).isFalse();
        assertThat(member.changesInvoices()).isFalse();
        assertThat(nobody.roles()).isEmpty();
        assertThat(nobody.readsJobsOf("acme")).isFalse();
        assertThat(Caller.authenticationOff().actsFor("anything")).isTrue();
    }

    @Test
    void a_caller_describes_itself_for_messages() {
        assertThat(Caller.of("alice", List.of("acme"), List.of("member")).describe())
                .isEqualTo("'alice' (member of acme)");
        assertThat(Caller.of("op", List.of(), List.of()).describe()).isEqualTo("'op' (no role)");
        assertThat(Caller.of("a", List.of("x", "y"), List.of()).onlyTenant()).isEmpty();
    }

    @Test
    void the_tenants_claim_must_hold_tenant_ids() {
        assertThat(Caller.fromClaims("a", "t", List.of("\"acme\"", "globex"), List.of("member")).tenants())
                .containsExactlyInAnyOrder("acme", "globex");
        assertThat(Caller.fromClaims("a", "t", "acme", List.of("member")).onlyTenant()).contains("acme");
        assertThat(Caller.fromClaims("op", "t", null, List.of("operator")).has(Role.OPERATOR)).isTrue();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Caller.fromClaims("a", "t", null, List.of("member")))
                .hasMessageContaining("claim 't' names no tenant");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Caller.fromClaims("a", "t", List.of("../etc"), List.of("member")))
                .hasMessageContaining("'../etc', which is not a tenant id");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Caller.fromClaims("a", "t", List.of("acme' OR '1'='1"), List.of("member")))
                .hasMessageContaining("not a tenant id");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Caller.fromClaims("a", "t", 42, List.of("member")))
                .hasMessageContaining("must be a tenant id or a list");
    }
}
