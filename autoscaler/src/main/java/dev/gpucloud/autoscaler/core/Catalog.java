package dev.gpucloud.autoscaler.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The instance types the autoscaler may launch, by name; names are unique. */
public final class Catalog {

    private final List<InstanceType> types;
    private final Map<String, Integer> index;

    private Catalog(List<InstanceType> types) {
        List<InstanceType> sorted = new ArrayList<>(types.size());
        for (InstanceType t : types) {
            if (t == null) {
                throw new IllegalArgumentException("catalog holds a null instance type");
            }
            sorted.add(t);
        }
        sorted.sort(Comparator.comparing(InstanceType::name));
        Map<String, Integer> idx = new HashMap<>();
        for (int i = 0; i < sorted.size(); i++) {
            if (idx.putIfAbsent(sorted.get(i).name(), i) != null) {
                throw new IllegalArgumentException("catalog names instance type " + sorted.get(i).name() + " twice");
            }
        }
        this.types = List.copyOf(sorted);
        this.index = Map.copyOf(idx);
    }

    /** A catalog of these types; throws on a duplicate name. */
    public static Catalog of(List<InstanceType> types) {
        if (types == null) {
            throw new IllegalArgumentException("types of a catalog is null");
        }
        return new Catalog(types);
    }

    /** AWS's GPU instance types in us-east-1, with list prices (see {@link AwsCatalog} for the source). */
    public static Catalog aws() {
        return AwsCatalog.CATALOG;
    }

    /** The types, sorted by name. */
    public List<InstanceType> types() {
        return types;
    }

    /** The type of this name, if the catalog has it. */
    public Optional<InstanceType> find(String name) {
        Integer i = index.get(name);
        return i == null ? Optional.empty() : Optional.of(types.get(i));
    }

    /** The type of this name; throws naming it when the catalog does not have it. */
    public InstanceType require(String name) {
        return find(name).orElseThrow(() -> new IllegalArgumentException("instance type " + name + " is not in the catalog"));
    }

    /** A type's position in {@link #types()}, or -1. */
    int indexOf(String name) {
        Integer i = index.get(name);
        return i == null ? -1 : i;
    }

    int size() {
        return types.size();
    }

    InstanceType get(int i) {
        return types.get(i);
    }

    @Override
    public String toString() {
        return "Catalog" + types.stream().map(InstanceType::name).toList();
    }
}
