package dev.gpucloud.agent.spool;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * Records waiting for the broker, kept in files under one directory. Each {@link #append} writes
 * one batch file (written to a temporary name, forced to disk, then renamed into place), so a
 * batch is either wholly in the spool or not at all. A batch file is deleted once every record in
 * it has been acknowledged. Opening a spool reads back every batch left by the previous run, so
 * its records are sent again, with the same headers and ce_id. Thread-safe.
 */
public final class Spool {

    private static final int MAGIC = 0x47435350; // "GCSP"
    private static final int VERSION = 1;
    static final String SUFFIX = ".batch";

    /** One record in the spool: its batch, its place in the batch, and the record. */
    public record Entry(long batch, int index, SpooledRecord record) {
    }

    private final Path dir;
    private final boolean fsync;
    private final TreeMap<Long, Batch> batches = new TreeMap<>();
    private final List<String> recoveryProblems = new ArrayList<>();
    private long nextSeq;

    private static final class Batch {
        final Path file;
        final List<SpooledRecord> records;
        final boolean[] acked;
        int remaining;

        Batch(Path file, List<SpooledRecord> records) {
            this.file = file;
            this.records = records;
            this.acked = new boolean[records.size()];
            this.remaining = records.size();
        }
    }

    /** Opens (creating it if needed) the spool in {@code dir} and reads back what an earlier run left there. */
    public Spool(Path dir, boolean fsync) {
        this.dir = dir;
        this.fsync = fsync;
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                for (Path file : files) {
                    String name = file.getFileName().toString();
                    if (name.endsWith(".tmp")) {
                        Files.deleteIfExists(file); // a batch whose append never finished: it was never acknowledged to anyone
                        continue;
                    }
                    if (!name.endsWith(SUFFIX)) {
                        continue;
                    }
                    long seq;
                    try {
                        seq = Long.parseLong(name.substring(0, name.length() - SUFFIX.length()));
                    } catch (NumberFormatException e) {
                        continue;
                    }
                    try {
                        List<SpooledRecord> records = read(file);
                        batches.put(seq, new Batch(file, records));
                    } catch (IOException | RuntimeException e) {
                        Path corrupt = file.resolveSibling(name + ".corrupt");
                        Files.move(file, corrupt, StandardCopyOption.REPLACE_EXISTING);
                        recoveryProblems.add("spool file " + file + " is unreadable (" + e.getMessage()
                                + "); kept as " + corrupt.getFileName());
                    }
                    nextSeq = Math.max(nextSeq, seq + 1);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the spool in " + dir + ": " + e.getMessage(), e);
        }
    }

    public Path dir() {
        return dir;
    }

    /** What was wrong with files found at opening (each kept aside as *.corrupt). */
    public synchronized List<String> recoveryProblems() {
        return List.copyOf(recoveryProblems);
    }

    /** Writes {@code records} to disk as one batch; when this returns, they survive a crash. */
    public synchronized List<Entry> append(List<SpooledRecord> records) {
        if (records.isEmpty()) {
            return List.of();
        }
        long seq = nextSeq++;
        Path file = dir.resolve(String.format("%020d", seq) + SUFFIX);
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try {
            byte[] bytes = encode(records);
            try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                channel.write(java.nio.ByteBuffer.wrap(bytes));
                if (fsync) {
                    channel.force(true);
                }
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to the spool in " + dir + ": " + e.getMessage(), e);
        }
        batches.put(seq, new Batch(file, List.copyOf(records)));
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < records.size(); i++) {
            entries.add(new Entry(seq, i, records.get(i)));
        }
        return entries;
    }

    /** Up to {@code max} records not yet acknowledged, oldest first. */
    public synchronized List<Entry> pending(int max) {
        List<Entry> out = new ArrayList<>();
        for (Map.Entry<Long, Batch> e : batches.entrySet()) {
            Batch batch = e.getValue();
            for (int i = 0; i < batch.records.size() && out.size() < max; i++) {
                if (!batch.acked[i]) {
                    out.add(new Entry(e.getKey(), i, batch.records.get(i)));
                }
            }
            if (out.size() >= max) {
                break;
            }
        }
        return out;
    }

    /** Records the broker's acknowledgement; a batch whose records are all acknowledged is deleted. */
    public synchronized void ack(Entry entry) {
        Batch batch = batches.get(entry.batch());
        if (batch == null || batch.acked[entry.index()]) {
            return;
        }
        batch.acked[entry.index()] = true;
        if (--batch.remaining == 0) {
            batches.remove(entry.batch());
            try {
                Files.deleteIfExists(batch.file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete acknowledged spool file " + batch.file, e);
            }
        }
    }

    /** How many records wait for the broker. */
    public synchronized int size() {
        return batches.values().stream().mapToInt(b -> b.remaining).sum();
    }

    static byte[] encode(List<SpooledRecord> records) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(records.size());
        for (SpooledRecord r : records) {
            out.writeUTF(r.topic());
            writeBytes(out, r.key() == null ? null : r.key().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            out.writeInt(r.headers().size());
            for (Map.Entry<String, byte[]> h : r.headers().entrySet()) {
                out.writeUTF(h.getKey());
                writeBytes(out, h.getValue());
            }
            writeBytes(out, r.value());
        }
        out.flush();
        CRC32 crc = new CRC32();
        crc.update(bytes.toByteArray());
        out.writeLong(crc.getValue());
        out.flush();
        return bytes.toByteArray();
    }

    static List<SpooledRecord> read(Path file) throws IOException {
        byte[] all = Files.readAllBytes(file);
        if (all.length < 20) {
            throw new IOException("too short (" + all.length + " bytes)");
        }
        CRC32 crc = new CRC32();
        crc.update(all, 0, all.length - 8);
        long stored = java.nio.ByteBuffer.wrap(all, all.length - 8, 8).getLong();
        if (stored != crc.getValue()) {
            throw new IOException("checksum mismatch");
        }
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(all, 0, all.length - 8));
        if (in.readInt() != MAGIC) {
            throw new IOException("not a spool batch");
        }
        int version = in.readInt();
        if (version != VERSION) {
            throw new IOException("unknown spool version " + version);
        }
        int count = in.readInt();
        List<SpooledRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String topic = in.readUTF();
            byte[] key = readBytes(in);
            int headerCount = in.readInt();
            Map<String, byte[]> headers = new LinkedHashMap<>();
            for (int h = 0; h < headerCount; h++) {
                headers.put(in.readUTF(), readBytes(in));
            }
            byte[] value = readBytes(in);
            records.add(new SpooledRecord(topic, key == null ? null : new String(key, java.nio.charset.StandardCharsets.UTF_8),
                    headers, value));
        }
        return records;
    }

    private static void writeBytes(DataOutputStream out, byte[] bytes) throws IOException {
        if (bytes == null) {
            out.writeInt(-1);
            return;
        }
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private static byte[] readBytes(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 0) {
            return null;
        }
        if (length > 16 * 1024 * 1024) {
            throw new IOException("field of " + length + " bytes is too long");
        }
        return in.readNBytes(length);
    }
}
