package dev.gpucloud.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Clients that hold a connection the slow way, over a raw socket: one that sends a header line now and then
 * and never ends its headers, one that starts a body and never finishes it. Each says how long the server
 * kept the connection open (or {@code giveUp} if it still was).
 */
public final class SlowClients {

    private SlowClients() {
    }

    /** Sends a request line, then a header line every {@code every}, never the blank line that ends them. */
    public static Duration dripHeaders(URL server, Duration every, Duration giveUp) throws IOException {
        try (Socket socket = new Socket(server.getHost(), server.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("GET /q/health HTTP/1.1\r\nHost: " + server.getHost() + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long start = System.nanoTime();
            long next = start + every.toNanos();
            int line = 0;
            while (System.nanoTime() - start < giveUp.toNanos()) {
                if (System.nanoTime() >= next) {
                    try {
                        out.write(("X-Drip-" + line++ + ": 1\r\n").getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    } catch (IOException closed) {
                        return Duration.ofNanos(System.nanoTime() - start);
                    }
                    next += every.toNanos();
                }
                if (closed(socket)) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
            }
            return giveUp;
        }
    }

    /** Sends a POST announcing 1,000 bytes of body and only 10 of them, then waits. */
    public static Duration unfinishedBody(URL server, String path, Duration giveUp) throws IOException {
        try (Socket socket = new Socket(server.getHost(), server.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: " + server.getHost()
                    + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\": \"12")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long start = System.nanoTime();
            while (System.nanoTime() - start < giveUp.toNanos()) {
                if (closed(socket)) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
            }
            return giveUp;
        }
    }

    /** Reads (and drops) what the server sent for up to 200 ms; whether it has closed the connection. */
    private static boolean closed(Socket socket) throws IOException {
        socket.setSoTimeout(200);
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[4096];
        try {
            return in.read(buffer) < 0;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }
}
