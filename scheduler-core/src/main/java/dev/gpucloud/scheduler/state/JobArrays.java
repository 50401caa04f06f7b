package dev.gpucloud.scheduler.state;

import dev.gpucloud.contracts.events.JobSpec;
import dev.gpucloud.contracts.limits.Check;
import dev.gpucloud.contracts.limits.Limits;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One spec submitted as many jobs, as {@code sbatch --array} and parameter sweeps do: {@code count} elements, or
 * every combination of a grid's values. Element {@code i} is the spec with the variables
 * {@value #ID_VAR}, {@value #INDEX_VAR} (0-based) and {@value #COUNT_VAR}, and for a grid one variable per
 * parameter holding its value in the element's combination (the last parameter varying fastest).
 */
public final class JobArrays {

    public static final String ID_VAR = "GPUCLOUD_ARRAY_ID";
    public static final String INDEX_VAR = "GPUCLOUD_ARRAY_INDEX";
    public static final String COUNT_VAR = "GPUCLOUD_ARRAY_COUNT";
    /** The longest request id an array may have: each element's is it with {@code [index]} after it. */
    public static final int MAX_REQUEST_ID = 100;

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** A grid's dimension: the variable it sets and its values. */
    public record Parameter(String name, List<String> values) {
        public Parameter {
            values = List.copyOf(values);
        }
    }

    /** A checked array: how many elements, and the grid they cover (empty: a plain count). */
    public record Plan(int count, List<Parameter> parameters) {
        public Plan {
            parameters = List.copyOf(parameters);
        }
    }

    private JobArrays() {
    }

    /**
     * Checks what a submission asks for: {@code count} 1..{@link Limits#ARRAY_COUNT}'s max, or with parameters 0
     * (their product) or equal to it; each parameter a variable name of its own with at least one value. Throws
     * IllegalArgumentException naming the field.
     */
    public static Plan plan(long count, List<Parameter> parameters) {
        Check.size(parameters, Limits.ARRAY_PARAMETERS, "array.parameters");
        Set<String> names = new HashSet<>();
        long product = 1;
        for (int i = 0; i < parameters.size(); i++) {
            Parameter p = parameters.get(i);
            String field = "array.parameters[" + i + "]";
            Check.text(p.name(), Limits.ENV_NAME, field + ".name");
            if (!ENV_NAME.matcher(p.name()).matches()) {
                throw new IllegalArgumentException("field '" + field + ".name' must be a variable name"
                        + " ([A-Za-z_][A-Za-z0-9_]*), was '" + Check.clip(p.name()) + "'");
            }
            if (p.name().startsWith("GPUCLOUD_")) {
                throw new IllegalArgumentException("field '" + field + ".name' may not begin with GPUCLOUD_, which"
                        + " the platform's own variables do");
            }
            if (!names.add(p.name())) {
                throw new IllegalArgumentException("field '" + field + ".name' repeats '" + p.name() + "'");
            }
            if (p.values().isEmpty()) {
                throw new IllegalArgumentException("field '" + field + ".values' must hold at least one value");
            }
            for (int v = 0; v < p.values().size(); v++) {
                Check.optionalText(p.values().get(v), Limits.ENV_VALUE, field + ".values[" + v + "]");
            }
            product *= p.values().size();
            if (product > Limits.ARRAY_COUNT.max()) {
                throw new IllegalArgumentException("field 'array.parameters' makes over " + Limits.ARRAY_COUNT.max()
                        + " combinations, the most elements an array may have");
            }
        }
        if (parameters.isEmpty()) {
            Check.number(count, Limits.ARRAY_COUNT, "array.count");
            return new Plan((int) count, parameters);
        }
        if (count != 0 && count != product) {
            throw new IllegalArgumentException("field 'array.count' is " + count + ", but the parameters make "
                    + product + " combinations (leave it 0 to take theirs)");
        }
        return new Plan((int) product, parameters);
    }

    /** The variables element {@code index} of the array gets. */
    public static Map<String, String> variables(String arrayId, Plan plan, int index) {
        Map<String, String> vars = new LinkedHashMap<>();
        vars.put(ID_VAR, arrayId);
        vars.put(INDEX_VAR, Integer.toString(index));
        vars.put(COUNT_VAR, Integer.toString(plan.count()));
        int rest = index;
        List<Parameter> ps = plan.parameters();
        String[] values = new String[ps.size()];
        for (int i = ps.size() - 1; i >= 0; i--) { // the last parameter varies fastest
            List<String> vs = ps.get(i).values();
            values[i] = vs.get(rest % vs.size());
            rest /= vs.size();
        }
        for (int i = 0; i < ps.size(); i++) {
            vars.put(ps.get(i).name(), values[i]);
        }
        return vars;
    }

    /** Every element's spec, in index order; a variable the spec already sets is refused, naming it. */
    public static List<JobSpec> elements(JobSpec spec, String arrayId, Plan plan) {
        List<JobSpec> out = new ArrayList<>(plan.count());
        for (int i = 0; i < plan.count(); i++) {
            out.add(spec.withEnv(variables(arrayId, plan, i)));
        }
        return out;
    }

    /** Element {@code index}'s job id. */
    public static String elementId(String arrayId, int index) {
        return arrayId + "-" + index;
    }

    /** Element {@code index}'s request id, from the array's. */
    public static String elementRequestId(String requestId, int index) {
        return requestId + "[" + index + "]";
    }
}
