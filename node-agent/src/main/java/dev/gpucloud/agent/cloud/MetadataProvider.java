package dev.gpucloud.agent.cloud;

import java.time.Instant;
import java.util.List;

/** One cloud's metadata service, as seen from the instance. */
public interface MetadataProvider {

    /** "aws", "gcp" or "azure". */
    String cloud();

    /** The notices standing now (none is an empty list). */
    List<CloudNotice> notices(Instant now) throws MetadataException;

    /** The instance's type, zone and capacity type. */
    InstanceFacts instance() throws MetadataException;
}
