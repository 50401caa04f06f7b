package dev.gpucloud.agent.nvml;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.nio.file.Path;

/** Asks the fake libnvidia-ml a test installed how many GPM sample buffers are still allocated. */
final class FakeGpm {

    interface Counter extends Library {
        int fakeNvmlGpmSamplesLive();
    }

    private FakeGpm() {
    }

    /** The count in the library loaded from {@code folder} (the same file JNA already has open). */
    static int liveSamples(Path folder) {
        return Native.load(folder.resolve("libnvidia-ml.so.1").toAbsolutePath().toString(), Counter.class)
                .fakeNvmlGpmSamplesLive();
    }
}
