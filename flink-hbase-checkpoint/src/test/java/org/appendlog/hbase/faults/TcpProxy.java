/*
 * Copyright AppendLog contributors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.appendlog.hbase.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Forwards a local port to a target port, so that a test can make a service unreachable (stop:
 * the port refuses connections and every open connection is cut) and reachable again (start on
 * the same port).
 */
final class TcpProxy implements AutoCloseable {

    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;
    private int port;

    TcpProxy(int targetPort) {
        this.targetPort = targetPort;
    }

    synchronized int start() throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress("localhost", port));
        port = socket.getLocalPort();
        server = socket;
        Thread acceptor = new Thread(() -> accept(socket), "tcp-proxy-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
        return port;
    }

    private void accept(ServerSocket socket) {
        while (!socket.isClosed()) {
            try {
                Socket client = socket.accept();
                Socket target = new Socket("localhost", targetPort);
                sockets.add(client);
                sockets.add(target);
                pump(client, target);
                pump(target, client);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t =
                new Thread(
                        () -> {
                            byte[] buffer = new byte[8192];
                            try (InputStream in = from.getInputStream();
                                    OutputStream out = to.getOutputStream()) {
                                int n;
                                while ((n = in.read(buffer)) >= 0) {
                                    out.write(buffer, 0, n);
                                }
                            } catch (IOException ignored) {
                                // a cut connection ends the pump
                            } finally {
                                closeQuietly(from);
                                closeQuietly(to);
                            }
                        },
                        "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Refuses new connections and cuts the open ones. */
    synchronized void stop() {
        closeQuietly(server);
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    @Override
    public void close() {
        stop();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            if (c != null) {
                c.close();
            }
        } catch (Exception ignored) {
            // nothing to do
        }
    }
}
