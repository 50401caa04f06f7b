package dev.gpucloud.scheduler.service.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reasons go to the database as JSON arrays of at most a batch's size, every text exactly as it was. */
class PendingReasonsBatchesTest {

    @Test
    void reasons_are_split_into_batches_of_at_most_the_size_and_none_is_lost() throws Exception {
        Map<String, String> reasons = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            reasons.put("job-" + i, "reason " + i);
        }

        List<String> batches = PendingReasons.batches(reasons, 2);

        assertThat(batches).hasSize(3);
        ObjectMapper json = new ObjectMapper();
        Map<String, String> back = new LinkedHashMap<>();
        for (String b : batches) {
            JsonNode rows = json.readTree(b);
            assertThat(rows.size()).isLessThanOrEqualTo(2);
            rows.forEach(r -> back.put(r.get("id").asText(), r.get("reason").asText()));
        }
        assertThat(back).isEqualTo(reasons);
    }

    @Test
    void quotes_newlines_and_other_scripts_survive_as_they_were() throws Exception {
        String nasty = "waiting for \"job-a\" (RUNNING)\n\t\\ 等待 GPU; drop table jobs; --";
        List<String> batches = PendingReasons.batches(Map.of("job-x", nasty), PendingReasons.ROWS);

        assertThat(batches).singleElement().satisfies(b ->
                assertThat(new ObjectMapper().readTree(b).get(0).get("reason").asText()).isEqualTo(nasty));
    }

    @Test
    void a_nul_or_a_lone_surrogate_becomes_a_question_mark_and_pairs_survive() throws Exception {
        String hostile = "fabric f\u00001: room for 2 \uD800 of 6 \uD83D\uDE80";
        List<String> batches = PendingReasons.batches(Map.of("job-x", hostile), PendingReasons.ROWS);

        assertThat(batches).singleElement().satisfies(b ->
                assertThat(new ObjectMapper().readTree(b).get(0).get("reason").asText())
                        .isEqualTo("fabric f?1: room for 2 ? of 6 \uD83D\uDE80"));
        assertThat(PendingReasons.storable("plain")).isSameAs("plain");
    }

    @Test
    void no_reasons_make_no_batch() {
        assertThat(PendingReasons.batches(Map.of(), 10)).isEmpty();
    }
}
