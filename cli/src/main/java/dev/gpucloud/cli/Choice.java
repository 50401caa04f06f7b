package dev.gpucloud.cli;

import dev.gpucloud.contracts.grpc.v1.CapacityPreference;
import dev.gpucloud.contracts.grpc.v1.Interconnect;
import dev.gpucloud.contracts.grpc.v1.JobState;
import dev.gpucloud.contracts.grpc.v1.PriorityClass;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;

/**
 * An option that takes one of a few words ("rdma", "spot-preferred"): read in any case, with '-'
 * and '_' alike; an unknown word is a one-line error that lists the words it could have been.
 * The words are the enum's constants less a prefix and the protobuf placeholders
 * ({@code *_UNSPECIFIED}, {@code UNRECOGNIZED}), so a new constant in the contract is a new choice.
 */
abstract class Choice<E extends Enum<E>> implements CommandLine.ITypeConverter<E> {

    private final Map<String, E> byWord = new LinkedHashMap<>();

    Choice(Class<E> type, String prefix) {
        for (E constant : type.getEnumConstants()) {
            String name = constant.name();
            if (name.startsWith(prefix) && !name.endsWith("_UNSPECIFIED") && !name.equals("UNRECOGNIZED")) {
                byWord.put(word(name.substring(prefix.length())), constant);
            }
        }
    }

    /** The word a person types for a constant's name: lower case, '-' between parts. */
    static String word(String name) {
        return name.strip().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    @Override
    public E convert(String value) {
        E choice = byWord.get(word(value));
        if (choice == null) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not one of "
                    + String.join(", ", byWord.keySet()) + " (any case)");
        }
        return choice;
    }

    /** none, nvlink or rdma. */
    static final class OfInterconnect extends Choice<Interconnect> {
        OfInterconnect() {
            super(Interconnect.class, "INTERCONNECT_");
        }
    }

    /** on-demand, spot or spot-preferred. */
    static final class OfCapacity extends Choice<CapacityPreference> {
        OfCapacity() {
            super(CapacityPreference.class, "CAPACITY_");
        }
    }

    /** low, normal or high. */
    static final class OfPriority extends Choice<PriorityClass> {
        OfPriority() {
            super(PriorityClass.class, "PRIORITY_");
        }
    }

    /** A job's lifecycle state: pending, scheduled, running, ... */
    static final class OfJobState extends Choice<JobState> {
        OfJobState() {
            super(JobState.class, "");
        }
    }
}
