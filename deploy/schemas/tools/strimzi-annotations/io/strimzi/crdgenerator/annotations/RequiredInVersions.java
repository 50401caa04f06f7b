package io.strimzi.crdgenerator.annotations;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

/** Strimzi's annotation of the same name (its crd-generator, not published), redeclared so reflection reads it. */
@Retention(RetentionPolicy.RUNTIME)
public @interface RequiredInVersions {
    /** Versions, e.g. "v1alpha1-v1beta2" or "v1+". */
    String value();
}
