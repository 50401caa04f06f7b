package dev.gpucloud.agent.spool;

import java.util.concurrent.CompletionStage;

/** Where spooled records go: completes when the broker has acknowledged the record, fails otherwise. */
@FunctionalInterface
public interface SpoolSink {
    CompletionStage<Void> send(SpooledRecord record);
}
