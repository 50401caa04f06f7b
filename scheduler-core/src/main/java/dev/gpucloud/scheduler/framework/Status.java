package dev.gpucloud.scheduler.framework;

/**
 * A plugin's answer about one host or one job: success, or why not, as a structured reason that
 * counts well ("6 of 8 A100-SXM4-40GB free", "other RDMA fabric"). UNSCHEDULABLE may pass once the
 * cluster changes; UNRESOLVABLE never will (no host of the fleet could ever take it).
 */
public record Status(Code code, String plugin, String reason) {

    public enum Code {
        SUCCESS,
        UNSCHEDULABLE,
        UNRESOLVABLE
    }

    public static final Status SUCCESS = new Status(Code.SUCCESS, "", "");

    public static Status unschedulable(String plugin, String reason) {
        return new Status(Code.UNSCHEDULABLE, plugin, reason);
    }

    public static Status unresolvable(String plugin, String reason) {
        return new Status(Code.UNRESOLVABLE, plugin, reason);
    }

    public boolean isSuccess() {
        return code == Code.SUCCESS;
    }
}
