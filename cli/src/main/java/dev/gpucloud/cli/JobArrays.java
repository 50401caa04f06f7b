package dev.gpucloud.cli;

import dev.gpucloud.contracts.grpc.v1.ArrayParameter;
import dev.gpucloud.contracts.grpc.v1.JobArray;
import dev.gpucloud.contracts.limits.Limits;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JobArray that a count, a grid of parameters, or both ask for, checked as the scheduler checks it (1..10,000
 * elements, at most 8 parameters, each a variable name with at least one value, a count that is the grid's
 * product), so a sweep that could never be accepted is refused before anything is sent. One rule for the job file's
 * {@code array:} and for {@code submit --array/--array-param}.
 */
final class JobArrays {

    /** A variable name, as env takes them. */
    static final String NAME = "[A-Za-z_][A-Za-z0-9_]*";
    /** The variables the scheduler gives every element itself: a parameter of that name would hide one. */
    static final String OWN_PREFIX = "GPUCLOUD_ARRAY_";

    private JobArrays() {
    }

    /**
     * Why an array cannot be: {@code at} is what it is about ("count", "grid" or a parameter's name), so a reader
     * of a file can point at that place.
     */
    static final class Refused extends Exception {
        final String at;

        Refused(String at, String message) {
            super(message);
            this.at = at;
        }
    }

    /** The array of {@code count} elements (null: the grid's product) over {@code grid} (null or empty: none). */
    static JobArray of(Long count, Map<String, List<String>> grid) throws Refused {
        long max = Limits.ARRAY_COUNT.max();
        long maxParameters = Limits.ARRAY_PARAMETERS.max();
        Map<String, List<String>> parameters = grid == null ? Map.of() : grid;
        if (count == null && grid == null) {
            throw new Refused("", "give count (how many elements, 1.." + max + ") or grid (the parameters' values)");
        }
        if (grid != null && grid.isEmpty()) {
            throw new Refused("grid", "grid has no parameters: give each a list of values, e.g. {LR: [1e-3, 1e-4]}");
        }
        JobArray.Builder array = JobArray.newBuilder();
        long product = 1;
        int n = 0;
        for (Map.Entry<String, List<String>> p : parameters.entrySet()) {
            String name = p.getKey();
            if (++n > maxParameters) {
                throw new Refused(name, "grid has " + parameters.size() + " parameters; at most " + maxParameters);
            }
            if (!name.matches(NAME) || name.length() > Limits.ENV_NAME.max()) {
                throw new Refused(name, "grid: '" + JobFile.clip(name) + "' is not a variable name (" + NAME
                        + ", at most " + Limits.ENV_NAME.max() + " characters): each element gets it in its env");
            }
            if (name.startsWith(OWN_PREFIX)) {
                throw new Refused(name, "grid: " + name + " is a name the scheduler gives every element itself ("
                        + OWN_PREFIX + "ID, _INDEX, _COUNT)");
            }
            List<String> values = p.getValue();
            if (values == null || values.isEmpty()) {
                throw new Refused(name, "grid: " + name + " has no values (a list of at least one)");
            }
            for (String v : values) {
                if (v.length() > Limits.ENV_VALUE.max()) {
                    throw new Refused(name, "grid: a value of " + name + " has " + v.length() + " characters; at most "
                            + Limits.ENV_VALUE.max());
                }
            }
            product = Math.min(product * values.size(), max + 1);
            array.addParameters(ArrayParameter.newBuilder().setName(name).addAllValues(values));
        }
        if (count != null && (count < 1 || count > max)) {
            throw new Refused("count", "count is " + count + "; an array has 1.." + max + " elements");
        }
        if (!parameters.isEmpty() && product > max) {
            throw new Refused("grid", "the grid has more than " + max + " combinations (" + sizes(parameters)
                    + "); an array has at most " + max + " elements");
        }
        if (!parameters.isEmpty() && count != null && count != product) {
            throw new Refused("count", "count is " + count + " but the grid has " + product + " combinations ("
                    + sizes(parameters) + "); leave count out, or make it the product");
        }
        return array.setCount((int) (parameters.isEmpty() ? count : product)).build();
    }

    /** "2 x 3": each parameter's number of values. */
    private static String sizes(Map<String, List<String>> grid) {
        return String.join(" x ", grid.values().stream().map(v -> String.valueOf(v.size())).toList());
    }

    /** The grid of {@code --array-param NAME=v1,v2} flags, in the order given. */
    static Map<String, List<String>> parseFlags(List<String> flags) throws Refused {
        Map<String, List<String>> grid = new LinkedHashMap<>();
        for (String flag : flags) {
            int eq = flag.indexOf('=');
            if (eq < 0) {
                throw new Refused("", "--array-param takes NAME=VALUE,VALUE,..., was '" + JobFile.clip(flag) + "'");
            }
            String name = flag.substring(0, eq);
            String values = flag.substring(eq + 1);
            List<String> list = values.isEmpty() ? List.of() : List.of(values.split(",", -1));
            if (grid.put(name, list) != null) {
                throw new Refused(name, "--array-param " + JobFile.clip(name) + " is given twice");
            }
        }
        return grid;
    }
}
