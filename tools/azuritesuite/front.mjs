// A front for the emulator on the port Azurite's table tests use. Those tests speak plain
// HTTP in some files and HTTPS in others, to one port, because each file starts its own
// Azurite server in one mode or the other. The emulator speaks HTTP only, so this front
// looks at the first byte of each connection: a TLS handshake (0x16) is ended here with
// the certificate Azurite's tests trust, anything else is passed on as it is. Each
// connection goes to the emulator as one connection of its own, so keep-alive and the
// order of requests are the client's.
//
//   node front.mjs LISTEN_PORT EMULATOR_PORT CERT KEY
import net from "node:net";
import tls from "node:tls";
import fs from "node:fs";

const [listenPort, emulatorPort, certFile, keyFile] = process.argv.slice(2);
const secureContext = tls.createSecureContext({
  cert: fs.readFileSync(certFile),
  key: fs.readFileSync(keyFile),
});

function pipe(client) {
  const upstream = net.connect(Number(emulatorPort), "127.0.0.1");
  client.pipe(upstream).pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", end);
  upstream.on("error", end);
  client.on("close", end);
  upstream.on("close", end);
}

const server = net.createServer((socket) => {
  socket.once("readable", () => {
    const first = socket.read(1);
    if (first === null) {
      socket.destroy();
      return;
    }
    socket.unshift(first);
    if (first[0] === 0x16) {
      pipe(new tls.TLSSocket(socket, { isServer: true, secureContext }));
    } else {
      pipe(socket);
    }
  });
  socket.on("error", () => socket.destroy());
});
server.listen(Number(listenPort), "127.0.0.1", () => {
  console.log(`front: 127.0.0.1:${listenPort} -> 127.0.0.1:${emulatorPort}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => process.exit(0));
}
