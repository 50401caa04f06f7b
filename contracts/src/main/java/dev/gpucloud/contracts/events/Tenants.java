package dev.gpucloud.contracts.events;

import java.util.regex.Pattern;

/** A tenant id: lower-case letters, digits and dashes, 1..63 characters, starting with a letter or digit. */
public final class Tenants {
    private static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

    private Tenants() {
    }

    public static String require(String tenant, String field) {
        Require.text(tenant, field);
        if (!TENANT.matcher(tenant).matches()) {
            throw new IllegalArgumentException("field '" + field
                    + "' must be 1..63 lower-case letters, digits or dashes, was '" + JobSpec.clip(tenant) + "'");
        }
        return tenant;
    }
}
