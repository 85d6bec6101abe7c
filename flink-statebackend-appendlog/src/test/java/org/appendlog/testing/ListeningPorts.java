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

package org.appendlog.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

/**
 * Free loopback ports for servers a test starts, below the kernel's ephemeral range. A port from
 * that range ({@code new ServerSocket(0)}) can go to an outgoing connection before the server
 * meant to listen on it starts, or while a server restarted on its old port is down (seen: an
 * HBase master that could not bind while HDFS was up; a DataNode that could not come back on its
 * port). Ports below the range are never given to outgoing connections.
 */
public final class ListeningPorts {

    /** Above the well-known and common service ports. */
    private static final int LOWEST_PORT = 20000;

    private final Random random = new Random();
    private final Set<Integer> handedOut = new HashSet<>();

    /** A port free now and not handed out by this instance before. */
    public int next() throws IOException {
        int high = ephemeralPortsStart() - 1;
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = LOWEST_PORT + random.nextInt(high - LOWEST_PORT + 1);
            if (!handedOut.contains(port) && bindable(port)) {
                handedOut.add(port);
                return port;
            }
        }
        throw new IOException("No free port between " + LOWEST_PORT + " and " + high);
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Where Linux starts handing out ports for outgoing connections (its default if unknown). */
    private static int ephemeralPortsStart() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            return Math.max(LOWEST_PORT + 1000, Integer.parseInt(range.split("\\s+")[0]));
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }
}
