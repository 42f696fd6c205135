/**
 * An HTTP(S) proxy that refuses everything and remembers which hosts were asked for. A real
 * agent CLI under test gets it as HTTPS_PROXY / HTTP_PROXY (the gateway on loopback is in
 * NO_PROXY), so a test can show the CLI tried no host but the gateway: no telemetry, update
 * check, plugin or model-list call, which would also hang or fail where there is no internet.
 */
export interface RefusingProxy {
  url: string;
  /** Hosts (`host:port`) asked for since the last reset, in order. */
  hosts(): string[];
  reset(): void;
  stop(): void;
}

export async function startRefusingProxy(): Promise<RefusingProxy> {
  let seen: string[] = [];
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket, data) {
        // `CONNECT host:443 HTTP/1.1` for HTTPS, `GET http://host/... HTTP/1.1` for HTTP.
        const line = new TextDecoder().decode(data).split("\r\n", 1)[0] ?? "";
        const [method, target = ""] = line.split(" ");
        if (method === "CONNECT") seen.push(target);
        else if (/^https?:\/\//.test(target)) seen.push(new URL(target).host);
        socket.write("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        socket.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    hosts: () => [...seen],
    reset: () => {
      seen = [];
    },
    stop: () => server.stop(true),
  };
}
