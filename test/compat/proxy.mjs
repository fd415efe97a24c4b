// A round-robin HTTP reverse proxy: one origin in front of several latchkey
// instances, as a load balancer without sticky sessions would be. Request n
// goes to backend n mod N with its method, path, headers (Host included) and
// body; the answer (status, headers with every Set-Cookie and Location, body)
// comes back untouched. Only hop-by-hop headers are dropped, as any proxy does.
// It counts the answers of each backend, so a suite can prove every instance
// served its share.
import http from "node:http";

const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authenticate", "proxy-authorization"]);

/** rawHeaders ([name, value, name, value, ...]) without hop-by-hop headers. */
function endToEnd(raw) {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) if (!HOP_BY_HOP.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  return out;
}

/**
 * Listen on 127.0.0.1:port and forward to backends [{name, port}] in turn.
 * Returns {port, counts: {name: answers}, errors: [..], requests: [{backend, method, path, status}], close()}.
 */
export async function startProxy({ port, backends }) {
  const agent = new http.Agent({ keepAlive: true });
  const counts = Object.fromEntries(backends.map((b) => [b.name, 0]));
  const errors = [];
  const requests = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const b = backends[next++ % backends.length];
    const up = http.request(
      { host: "127.0.0.1", port: b.port, method: req.method, path: req.url, headers: endToEnd(req.rawHeaders), setHost: false, agent },
      (upRes) => {
        counts[b.name]++;
        requests.push({ backend: b.name, method: req.method, path: req.url, status: upRes.statusCode });
        res.writeHead(upRes.statusCode, upRes.statusMessage, endToEnd(upRes.rawHeaders));
        upRes.pipe(res);
      },
    );
    up.on("error", (e) => {
      errors.push(`${req.method} ${req.url} -> ${b.name}: ${e.message}`);
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`compat proxy: backend ${b.name} failed: ${e.message}`);
    });
    req.pipe(up);
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    port,
    counts,
    errors,
    requests,
    async close() {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
      agent.destroy();
    },
  };
}
