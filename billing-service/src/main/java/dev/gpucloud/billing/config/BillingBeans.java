package dev.gpucloud.billing.config;

import dev.gpucloud.billing.fold.BillingPolicy;
import dev.gpucloud.billing.fold.InvoiceCalculator;
import dev.gpucloud.billing.fold.PriceCatalog;
import dev.gpucloud.billing.fold.ReservedCommitment;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jboss.logging.Logger;

/** Builds the plain-Java billing rules from configuration, once, and fails startup on a bad catalog. */
@Singleton
public class BillingBeans {

    private static final Logger LOG = Logger.getLogger(BillingBeans.class);

    /** The value of {@code gpucloud.billing.catalog-location} that selects the built-in catalog. */
    public static final String BUILTIN = "builtin";

    @Produces
    @Singleton
    BillingPolicy policy(BillingConfig config) {
        return new BillingPolicy(config.minimumBillableSeconds());
    }

    @Produces
    @Singleton
    PriceCatalog catalog(BillingConfig config) {
        PriceCatalog catalog;
        String location = config.catalogLocation().strip();
        if (location.equals(BUILTIN)) {
            catalog = PriceCatalog.awsDefaults();
        } else {
            try {
                String text = Files.readString(Path.of(location), StandardCharsets.UTF_8);
                catalog = PriceCatalog.empty().withEntries(text);
            } catch (IOException e) {
                throw new IllegalStateException("gpucloud.billing.catalog-location: cannot read " + location, e);
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("gpucloud.billing.catalog-location " + location + ": " + e.getMessage(), e);
            }
        }
        if (config.catalogOverrides().isPresent()) {
            try {
                catalog = catalog.withEntries(config.catalogOverrides().get());
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("gpucloud.billing.catalog-overrides: " + e.getMessage(), e);
            }
        }
        LOG.infof("price catalog from %s: %d prices (usage of unlisted models is held until priced); %s",
                location, catalog.size(), catalog);
        return catalog;
    }

    /** Builds the catalog at startup, so a bad catalog stops the service before it consumes anything. */
    void validateAtStartup(@Observes StartupEvent startup, InvoiceCalculator calculator) {
        LOG.infof("billing: minimum %d s per allocation, %d catalog prices, %d reserved commitments",
                calculator.policy().minimumSeconds(), calculator.catalog().size(), calculator.commitments().size());
        LOG.info(dev.gpucloud.contracts.kafka.Enrolment.startupNote());
    }

    @Produces
    @Singleton
    InvoiceCalculator calculator(BillingPolicy policy, PriceCatalog catalog, BillingConfig config) {
        return new InvoiceCalculator(policy, catalog, commitments(config));
    }

    /** The reserved commitments configured; a malformed or overlapping one stops startup, naming the property. */
    List<ReservedCommitment> commitments(BillingConfig config) {
        if (config.commitments().isEmpty()) {
            return List.of();
        }
        try {
            List<ReservedCommitment> commitments = ReservedCommitment.parse(config.commitments().get());
            new InvoiceCalculator(BillingPolicy.awsPerSecond(), PriceCatalog.empty(), commitments);
            LOG.infof("reserved commitments: %s", commitments);
            return commitments;
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("gpucloud.billing.commitments: " + e.getMessage(), e);
        }
    }
}
