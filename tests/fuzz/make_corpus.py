#!/usr/bin/env python3
"""Writes the seed corpora in corpus/<target>/: a few small valid and
invalid inputs per fuzz target. Run once after changing the wire formats;
the generated files are committed. Inputs that reproduced a crash are added
by hand under corpus/<target>/crash-<what> and are not touched here.

Formats follow common/protocol/channelframe.h, controlmessage.h, channelopen.h,
framerecord.h and common/identity/enrollmentbundle.h."""

import base64
import hashlib
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"

# --- channel frames ------------------------------------------------------------
OPEN, ACCEPT, DATA, CREDIT, CLOSE = 1, 2, 3, 4, 5


def frame(kind, channel, body=b"", flags=0):
    return struct.pack(">BBI", kind, flags, channel) + body


def open_frame(channel, window, metadata=b"{}"):
    return frame(OPEN, channel, struct.pack(">I", window) + metadata)


def accept_frame(channel, window):
    return frame(ACCEPT, channel, struct.pack(">I", window))


def data_frame(channel, payload):
    return frame(DATA, channel, payload)


def credit_frame(channel, amount):
    return frame(CREDIT, channel, struct.pack(">I", amount))


def close_frame(channel, code, reason=b""):
    return frame(CLOSE, channel, struct.pack(">H", code) + reason)


def mux_stream(*frames):
    """The fuzz_channelmux input format: each frame after a u16 BE length."""
    return b"".join(struct.pack(">H", len(f)) + f for f in frames)


# --- enrollment bundles --------------------------------------------------------
FWD_PREFIX = "cloopfwd1."
EXE_PREFIX = "cloopexe1."


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def token(prefix, seed):
    return prefix + b64url(hashlib.sha256(seed).digest())


def pin(seed):
    return "sha256:" + base64.b64encode(hashlib.sha256(seed).digest()).decode()


def bundle_json(url, tok, pins, urls=None):
    fields = {"p": pins, "t": tok, "u": url}
    if urls is not None:
        fields["us"] = urls  # every hub URL of a cluster, "u" first
    return json.dumps(fields, separators=(",", ":")).encode()


def bundle(prefix, body):
    checksum = hashlib.sha256(prefix.encode() + body).digest()[:4]
    return (prefix + b64url(body + checksum)).encode()


# --- layer-2 frame records (common/protocol/framerecord.h) ---------------------
NEEDS_CSUM, DATA_VALID = 0x01, 0x02
GSO_TCPV4, GSO_ECN = 1, 0x80
MACS = bytes.fromhex("020000000001020000000002")


def vnet(flags=0, gso_type=0, hdr_len=0, gso_size=0, csum_start=0, csum_offset=0):
    """virtio_net_hdr: little-endian, unlike everything else here."""
    return struct.pack("<BBHHHH", flags, gso_type, hdr_len, gso_size, csum_start, csum_offset)


def frame_record(header, eth_frame):
    return struct.pack(">I", len(header) + len(eth_frame)) + header + eth_frame


def ones_sum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def ipv4(proto, l4_len, src=bytes([192, 168, 10, 1]), dst=bytes([192, 168, 10, 2])):
    head = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + l4_len, 0x1234, 0x4000, 64, proto, 0,
                       src, dst)
    return head[:10] + struct.pack(">H", ~ones_sum(head) & 0xFFFF) + head[12:], src, dst


def partial_udp4(payload, tag=b""):
    """A UDP/IPv4 frame as checksum offload leaves it: the field holds the
    folded pseudo-header sum. Returns (frame, csum_start)."""
    l4_len = 8 + len(payload)
    ip, src, dst = ipv4(17, l4_len)
    seed = ones_sum(src + dst + struct.pack(">BBH", 0, 17, l4_len))
    udp = struct.pack(">HHHH", 54321, 53, l4_len, seed) + payload
    return MACS + tag + b"\x08\x00" + ip + udp, 14 + len(tag) + 20


def partial_tcp4(payload):
    l4_len = 20 + len(payload)
    ip, src, dst = ipv4(6, l4_len)
    seed = ones_sum(src + dst + struct.pack(">BBH", 0, 6, l4_len))
    tcp = struct.pack(">HHIIBBHHH", 50000, 80, 1, 2, 0x50, 0x18, 64240, seed, 0) + payload
    return MACS + b"\x08\x00" + ip + tcp, 34


def sctp4(chunk_data):
    sctp = struct.pack(">HHII", 2905, 2905, 0x11223344, 0) + \
        struct.pack(">BBHIHHI", 0, 3, 16 + len(chunk_data), 1, 0, 0, 0) + chunk_data
    ip, _, _ = ipv4(132, len(sctp))
    return MACS + b"\x08\x00" + ip + sctp, 34


def partial_udp6(payload):
    l4_len = 8 + len(payload)
    src = bytes.fromhex("fd000000000000000000000000000001")
    dst = bytes.fromhex("fd0000000000000000000000000000ff")
    seed = ones_sum(src + dst + struct.pack(">I3xB", l4_len, 17))
    ip = struct.pack(">IHBB", 0x60000000, l4_len, 17, 64) + src + dst
    udp = struct.pack(">HHHH", 54321, 53, l4_len, seed) + payload
    return MACS + b"\x86\xdd" + ip + udp, 54


def l2_input(*records, chunks=b""):
    """The fuzz_framerecord input format: a count of chunk-size bytes, the
    sizes, then the record stream."""
    return bytes([len(chunks)]) + chunks + b"".join(records)


def l2_corpus():
    arp = MACS + b"\x08\x06" + bytes(range(28))
    udp, udp_start = partial_udp4(b"hello, segment")
    udp_odd, _ = partial_udp4(b"odd")
    tagged, tagged_start = partial_udp4(b"already tagged", tag=b"\x81\x00\x00\x64")
    tcp, tcp_start = partial_tcp4(bytes(range(256)) * 3)
    sctp, sctp_start = sctp4(b"abcd")
    udp6, udp6_start = partial_udp6(b"v6 payload")
    return {
        "arp": l2_input(frame_record(vnet(), arp)),
        "arp-bytewise": l2_input(frame_record(vnet(), arp), chunks=b"\x00"),
        "udp4-needs-csum": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, udp_start, 6), udp)),
        "udp4-odd-payload": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, udp_start, 6),
                                                  udp_odd)),
        "udp4-inline-tag": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, tagged_start, 6),
                                                 tagged)),
        "udp4-8021ad": l2_input(frame_record(vnet(NEEDS_CSUM | 0x40, 0, 0, 0, udp_start, 6), udp)),
        "udp6-needs-csum": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, udp6_start, 6), udp6)),
        "tcp4-needs-csum": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, tcp_start, 16), tcp)),
        "tcp4-gso": l2_input(frame_record(
            vnet(NEEDS_CSUM, GSO_TCPV4 | GSO_ECN, 54, 200, tcp_start, 16), tcp)),
        "sctp4": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, sctp_start, 8), sctp)),
        "data-valid": l2_input(frame_record(vnet(DATA_VALID), udp)),
        "three-in-chunks": l2_input(
            frame_record(vnet(), arp),
            frame_record(vnet(NEEDS_CSUM, 0, 0, 0, udp_start, 6), udp),
            frame_record(vnet(NEEDS_CSUM, 0, 0, 0, sctp_start, 8), sctp),
            chunks=b"\x02\x09\x00"),
        "partial-record": l2_input(frame_record(vnet(), arp)[:30]),
        "bad-csum-start": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, 200, 6), udp)),
        "bad-csum-offset": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, udp_start, 40), udp)),
        "bad-sctp-offset": l2_input(frame_record(vnet(NEEDS_CSUM, 0, 0, 0, sctp_start, 6), sctp)),
        "bad-length-short": l2_input(struct.pack(">I", 23) + bytes(23)),
        "bad-length-huge": l2_input(struct.pack(">I", 0xFFFFFFFF) + bytes(16)),
        "bad-after-good": l2_input(frame_record(vnet(), arp), struct.pack(">I", 65564)),
    }


# --- control messages ----------------------------------------------------------
def message(**fields):
    return json.dumps(fields, separators=(",", ":")).encode()


def http_input(stream, body_units=4, chunks=b""):
    """The fuzz_httphead format: chunk sizes, body limit in the high nibble."""
    return bytes([(body_units << 4) | len(chunks)]) + chunks + stream


def http_corpus():
    get = b"GET /api/health HTTP/1.1\r\nHost: hub\r\n\r\n"
    post = (b"POST /api/forwarders HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer cat_x\r\n"
            b"Content-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"name\": \"lab3\"}")
    chunked = (b"POST /api/runs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    upgrade = (b"GET /api/forwarders/connect HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\n"
               b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               b"Sec-WebSocket-Version: 13\r\n\r\n")
    return {
        "get": http_input(get),
        "get-split": http_input(get, chunks=bytes([1, 3, 2])),
        "post": http_input(post),
        "post-split": http_input(post, chunks=bytes([2, 5])),
        "pipelined": http_input(get + post + get),
        "chunked": http_input(chunked, chunks=bytes([4])),
        "upgrade": http_input(upgrade),
        "http10": http_input(b"GET / HTTP/1.0\r\n\r\n"),
        "bad-declared-too-large": http_input(
            b"POST /api/forwarders HTTP/1.1\r\nContent-Length: 268435456\r\n\r\n", body_units=1),
        "bad-chunked-too-large": http_input(chunked.replace(b"6\r\n world", b"ff\r\n" + b"x" * 255), body_units=1),
        "bad-both-lengths": http_input(
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
        "bad-head-too-large": http_input(b"GET / HTTP/1.1\r\nX: " + b"a" * 1900, chunks=bytes([15])),
        "bad-http2": http_input(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        "bad-garbage": http_input(b"\x16\x03\x01\x02\x00\x01\x00"),
    }


def greeting_corpus():
    forwarders, executors, events, binary = 0, 1, 2, 4
    hello = json.dumps({"type": "hello", "role": "forwarder", "protocol": 25,
                        "credential": token("cfc_", b"greeting"), "software": "0.1.0"}).encode()
    redeem = json.dumps({"type": "redeem", "role": "executor", "protocol": 25,
                         "token": token("cft_", b"greeting"), "software": "0.1.0"}).encode()
    subscribe = json.dumps({"type": "subscribe", "token": token("cat_", b"greeting")}).encode()
    return {
        "hello": bytes([forwarders]) + hello,
        "redeem": bytes([executors]) + redeem,
        "subscribe": bytes([events]) + subscribe,
        "bad-hello-wrong-endpoint": bytes([executors]) + hello,
        "bad-hello-binary": bytes([forwarders | binary]) + hello,
        "bad-old-protocol": bytes([forwarders]) + hello.replace(b"25", b"3"),
        "bad-not-json": bytes([forwarders]) + b"let me in",
        "bad-subscribe-binary": bytes([events | binary]) + subscribe,
        "bad-subscribe-number": bytes([events]) + b'{"type": "subscribe", "token": 42}',
    }


# --- release signatures (common/release/releasesignature.h) ---------------------
def release_signature(version="0.2.0", channel="stable", commit="0123456789abcdef" * 2 + "01234567",
                      digest=None, key="ed25519:0123456789abcdef", signature=bytes(range(64))):
    digest = digest or hashlib.sha256(b"package").hexdigest()
    lines = ["cloop-release 1", "package=cloop-agent", f"version={version}", f"channel={channel}",
             f"commit={commit}", f"sha256={digest}", f"key={key}",
             "signature=" + base64.b64encode(signature).decode()]
    return ("\n".join(lines) + "\n").encode()


def release_signature_corpus():
    return {
        "stable": release_signature(),
        "edge": release_signature(version="0.3.0~git0123456789ab", channel="edge"),
        "bad-edge-version": release_signature(version="0.3.0~gitffffffffffff", channel="edge"),
        "bad-channel": release_signature(channel="nightly"),
        "bad-short-signature": release_signature(signature=b"short"),
        "bad-crlf": release_signature().replace(b"\n", b"\r\n"),
        "bad-truncated": release_signature()[:90],
    }


# --- USB/IP data phase (usbipurbcounter.h) ------------------------------------
CMD_SUBMIT, CMD_UNLINK, RET_SUBMIT, RET_UNLINK = 1, 2, 3, 4


def urb_header(command, seq, direction=0, length=0, packets=-1, flags=0):
    # basic (command, seqnum, devid, direction, ep), then the command's union:
    # flags or status, length, start frame, packets, interval, setup.
    return struct.pack(">IIIIIIiiii8s", command, seq, 0x10002, direction, 1, flags, length, 0,
                       packets, 0, b"\0" * 8)


def urb_input(to_device, to_run, piece=7):
    # The target's framing: a piece size, the length of the part towards the
    # device, that part, then the part towards the run.
    return bytes([piece]) + struct.pack(">I", len(to_device)) + to_device + to_run


def urb_corpus():
    control_in = urb_header(CMD_SUBMIT, 1, direction=1, length=18)
    bulk_out = urb_header(CMD_SUBMIT, 2, direction=0, length=64) + b"o" * 64
    iso_in = urb_header(CMD_SUBMIT, 3, direction=1, length=96, packets=2) + b"d" * 32
    answers = (urb_header(RET_SUBMIT, 1, length=18) + b"i" * 18 + urb_header(RET_SUBMIT, 2, length=64)
               + urb_header(RET_SUBMIT, 3, length=90, packets=2) + b"i" * 90 + b"d" * 32)
    return {
        "submit-and-answer": urb_input(control_in + bulk_out + iso_in, answers),
        "unlink": urb_input(urb_header(CMD_SUBMIT, 5, direction=1, length=8) + urb_header(CMD_UNLINK, 6, flags=5),
                            urb_header(RET_UNLINK, 6), piece=1),
        "bad-answer-to-nothing": urb_input(b"", urb_header(RET_SUBMIT, 9, length=4) + b"iiii"),
        "bad-unknown-command": urb_input(urb_header(9, 1), b""),
    }


# --- WebSocket frames -----------------------------------------------------------
WS_KEY = b"\x37\xfa\x21\x3d"


def ws_frame(opcode, payload=b"", final=True, key=WS_KEY):
    """One RFC 6455 frame, masked with `key` unless it is None."""
    head = bytes([(0x80 if final else 0) | opcode])
    mask_bit = 0x80 if key is not None else 0
    if len(payload) < 126:
        head += bytes([mask_bit | len(payload)])
    elif len(payload) <= 0xFFFF:
        head += bytes([mask_bit | 126]) + struct.pack(">H", len(payload))
    else:
        head += bytes([mask_bit | 127]) + struct.pack(">Q", len(payload))
    if key is None:
        return head + payload
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_input(stream, from_client=True, limit_kib=64, chunks=b""):
    """The fuzz_websocketframes format: settings, chunk sizes, the stream."""
    settings = (1 if from_client else 0) | ((limit_kib - 1) << 1)
    return bytes([settings, len(chunks)]) + chunks + stream


def websocket_corpus():
    close = struct.pack(">H", 1001) + "the hub is stopping".encode()
    return {
        "text-binary-ping": ws_input(ws_frame(1, "héllo".encode()) + ws_frame(2, bytes(range(200)))
                                     + ws_frame(9, b"beat"), chunks=b"\x01\x03"),
        "fragments-around-control": ws_input(ws_frame(2, b"one ", final=False) + ws_frame(10, b"p")
                                             + ws_frame(0, b"two")),
        "close": ws_input(ws_frame(8, close) + ws_frame(8)),
        "from-server": ws_input(ws_frame(1, b"Hello", key=None) + ws_frame(9, b"x", key=None),
                                from_client=False),
        "bad-unmasked": ws_input(ws_frame(2, b"x", key=None)),
        "bad-reserved": ws_input(b"\xc2\x81" + WS_KEY + b"x"),
        "bad-long-ping": ws_input(ws_frame(9, b"x" * 126)),
        "bad-not-shortest": ws_input(b"\x82\xfe\x00\x05" + WS_KEY + b"hello"),
        "bad-over-limit": ws_input(b"\x82\xff" + struct.pack(">Q", 1 << 20), limit_kib=1),
        "bad-utf8": ws_input(ws_frame(1, b"\xc3\x28")),
        "bad-close-code": ws_input(ws_frame(8, struct.pack(">H", 1005))),
        "bad-continuation": ws_input(ws_frame(0, b"x")),
    }


def upgrade_corpus():
    """fuzz_upgradeanswer: chunk sizes, then a server's answer to an upgrade
    made with RFC 6455's example key."""
    accept = b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    switching = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    body = b'{"error":{"code":"starting","message":"the hub is starting"}}'

    def chunked(stream, chunks=b""):
        return bytes([len(chunks)]) + chunks + stream

    return {
        "upgraded": chunked(switching + b"\x81\x02hi", b"\x02\x05"),
        "wrong-accept": chunked(switching.replace(accept, b"A" * 28)),
        "refused-json": chunked(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\n"
                                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
                                + body, b"\x03"),
        "refused-to-the-end": chunked(b"HTTP/1.1 403 Forbidden\r\n\r\nnot you"),
        "chunked-refusal": chunked(b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   b"5\r\nhello\r\n0\r\n\r\n"),
        "not-http": chunked(b"SSH-2.0-OpenSSH_9.2\r\n"),
        "cut-short": chunked(switching[:40]),
        # http-parser forgives a lone CR before the head's last line: where
        # the head ends must not depend on it.
        "lone-cr-head": chunked(switching[:-1] + b"1 Switching", b"\x02\x05"),
    }


def main():
    fwd_token = token("cft_", b"seed forwarder token")
    exe_token = token("cet_", b"seed executor token")
    pins = pin(b"hub key 1") + "," + pin(b"hub key 2")
    fwd_body = bundle_json("wss://hub.example.net:8443", fwd_token, pin(b"hub key 1"))
    exe_body = bundle_json("wss://10.0.0.5:8443/tunnel", exe_token, pins)
    fwd_bundle = bundle(FWD_PREFIX, fwd_body)

    corpora = {
        "fuzz_channelframe": {
            "open": open_frame(1, 256 * 1024, b'{"device":"usb"}'),
            "accept": accept_frame(2, 65536),
            "data": data_frame(3, b"hello"),
            "data-1000": data_frame(7, bytes(range(256)) * 3 + bytes(232)),
            "credit": credit_frame(5, 4096),
            "close-normal": close_frame(1, 0, b"bye"),
            "close-device-gone": close_frame(9, 4),
            "bad-short": b"\x03\x00\x00",
            "bad-flags": frame(DATA, 1, b"x", flags=0x80),
            "bad-channel-0": data_frame(0, b"x"),
            "bad-kind": frame(9, 1, b"x"),
            "bad-credit-0": credit_frame(1, 0),
            "bad-window-0": open_frame(1, 0),
            "bad-window-huge": accept_frame(2, 0xFFFFFFFF),
            "bad-accept-length": frame(ACCEPT, 2, b"\x00\x01"),
            "bad-close-code": close_frame(1, 99),
            "bad-empty-data": data_frame(1, b""),
        },
        "fuzz_controlmessage": {
            "hello": message(type="hello", protocol=1, software="cloop-forward 0.1.0",
                             role="forwarder", credential="cfc_abc"),
            "redeem": message(type="redeem", protocol=1, software="cloop-agent 0.1.0",
                              role="executor", token=exe_token),
            "enrolled": message(type="enrolled", id=42, name="lab-yubikey", credential="cec_xyz"),
            "welcome-usb": message(type="welcome", protocol=1, software="cloop-hub 0.1.0", id=7,
                                   name="bench", device={"kind": "usb", "vendor": "1050",
                                                         "product": "0407", "serial": "ABC123"}),
            "welcome-l2": message(type="welcome", protocol=1, software="cloop-hub 0.1.0", id=8,
                                  name="segment", device={"kind": "l2", "interface": "eth1"}),
            "welcome-nodevice": message(type="welcome", protocol=1, software="cloop-hub", id=9,
                                        name="agent"),
            "error": message(type="error", code="revoked", message="credential revoked",
                             permanent=True),
            "error-hub-stopping": message(type="error", code="hub_stopping",
                                          message="the hub is stopping", permanent=False,
                                          retry_within_ms=20000),
            "bad-error-window": message(type="error", code="hub_stopping", message="stopping",
                                        permanent=True, retry_within_ms=-1),
            "runs-held": message(type="runs.held", run_ids=[3, 41, 9007199254740991]),
            "bad-runs-held": message(type="runs.held", run_ids=[1, 2.5, "3"]),
            "runs-held-kept": message(type="runs.held", run_ids=[3, 41],
                                      kept_devices=[{"run_id": 3, "binding_id": 7}]),
            "bad-runs-held-kept": message(type="runs.held", run_ids=[3],
                                          kept_devices=[{"run_id": 3}, 7]),
            "device-released": message(type="device.released", run_id=3, binding_id=7,
                                       reason="binding 7 ended (unbound by alice)"),
            "bad-device-released": message(type="device.released", run_id=3, binding_id=0),
            "device-state": message(type="device.state", mtu=9000, up=True, carrier=True),
            "device-counters": message(type="device.counters", run_id=3, binding_id=7, frames_to_run=1200,
                                       frames_from_run=40, dropped_to_run=2, dropped_from_run=0),
            "bad-device-counters": message(type="device.counters", run_id=3, binding_id=7, frames_to_run=-1,
                                           frames_from_run=0, dropped_to_run=0, dropped_from_run=0),
            "run-start-devices": message(type="run.start", run_id=12, workdir="runs/12", argv=["sh", "-c", "true"],
                                         devices=[{"binding_id": 3, "name": "fwd-lab", "kind": "l2",
                                                   "target": "fwd0", "address": "192.0.2.10/24", "mtu": 1500}]),
            "bad-run-start-device": message(type="run.start", run_id=12, workdir="runs/12", argv=["true"],
                                            devices=[{"binding_id": 3, "name": "fwd-lab", "kind": "l2",
                                                      "target": "../../etc"}]),
            "bad-not-json": b'{"type":"hello",',
            "bad-array": b'["hello"]',
            "bad-no-type": message(protocol=1),
            "bad-unknown-type": message(type="goodbye"),
            "bad-protocol-0": message(type="hello", protocol=0, software="x", role="forwarder",
                                      credential="c"),
            "bad-role": message(type="hello", protocol=1, software="x", role="hub",
                                credential="c"),
            "bad-device": message(type="welcome", protocol=1, software="x", id=1, name="n",
                                  device={"kind": "usb", "vendor": "10500", "product": "1"}),
            "hub-members": message(type="hub.members",
                                   hubs=["wss://hub-a.example:7443", "wss://hub-b.example:7443"]),
            "welcome-hubs": message(type="welcome", protocol=29, software="0.5.0", id=7, name="bench",
                                    hubs=["wss://hub-b.example:7443", "ws://127.0.0.1:7443"]),
            "bad-hub-members-plaintext": message(type="hub.members",
                                                 hubs=["wss://hub-a.example", "ws://hub-b.example"]),
            "bad-hub-members-twice": message(type="hub.members",
                                             hubs=["wss://hub-a.example", "https://hub-a.example/"]),
        },
        "fuzz_channelopen": {
            "run-log": message(kind="run-log", run_id=41),
            "segment": message(kind="segment", run_id=12, binding_id=3),
            "segment-named": message(kind="segment", run_id=12, binding_id=3, interface="eth1",
                                     device={"kind": "l2", "interface": "eth1"}),
            "usb-run": message(kind="usb", run_id=12, binding_id=3, busid="1-1.4"),
            "usb-test": message(kind="usb", purpose="test"),
            "device-test": message(kind="device-test"),
            "agent-segment": message(kind="device", run_id=12, binding_id=3, name="fwd-lab",
                                     device_kind="l2"),
            "agent-usb": message(kind="device", run_id=12, binding_id=3, name="fwd-hsm",
                                 device_kind="usb", busid="1-1.4"),
            "bad-kind": message(kind="l2", run_id=1),
            "bad-run-id": message(kind="run-log", run_id=9007199254740993),
            "bad-purpose": message(kind="usb", purpose="flash", run_id=1, binding_id=1),
            "bad-device": message(kind="segment", run_id=1, binding_id=1,
                                  device={"kind": "usb", "vendor": "zz"}),
            "bad-agent-busid": message(kind="device", run_id=1, binding_id=1, name="fwd-hsm",
                                       device_kind="usb", busid="../1-1"),
            "bad-not-object": b'["run-log", 1]',
        },
        "fuzz_bundle": {
            # Pasted text.
            "forwarder": fwd_bundle,
            "executor": bundle(EXE_PREFIX, exe_body),
            "forwarder-wrapped": fwd_bundle[:30] + b"\n  " + fwd_bundle[30:] + b"\n",
            "bad-other-version": b"cloopfwd2." + fwd_bundle[10:],
            "bad-truncated": fwd_bundle[:-5],
            "bad-checksum": fwd_bundle[:-2] + (b"AA" if fwd_bundle[-2:] != b"AA" else b"BB"),
            "bad-character": fwd_bundle[:20] + b"+" + fwd_bundle[21:],
            "bad-not-a-bundle": b"hello world",
            # JSON bodies (the target also wraps each input into a bundle).
            "body-forwarder": fwd_body,
            "body-executor": exe_body,
            "body-no-pins": bundle_json("wss://hub.example.net", fwd_token, ""),
            "body-bad-url": bundle_json("wss://", fwd_token, ""),
            "body-bad-token": bundle_json("wss://hub.example.net", "cat_nope", ""),
            "body-bad-pin": bundle_json("wss://hub.example.net", fwd_token, "sha1:AAAA"),
            "body-cluster": bundle_json("wss://hub-a.example.net:8443", fwd_token, pins,
                                        ["wss://hub-a.example.net:8443", "wss://hub-b.example.net:8443"]),
            "body-bad-cluster-first": bundle_json("wss://hub-c.example.net", fwd_token, pins,
                                                  ["wss://hub-a.example.net", "wss://hub-c.example.net"]),
            "body-bad-cluster-twice": bundle_json("wss://hub-a.example.net", fwd_token, pins,
                                                  ["wss://hub-a.example.net", "wss://hub-a.example.net"]),
        },
        "fuzz_channelmux": {
            "peer-channel-lifecycle": mux_stream(
                open_frame(1, 256 * 1024, b'{"device":"usb"}'),
                data_frame(1, b"ping"),
                credit_frame(1, 4096),
                data_frame(1, b"more bytes"),
                close_frame(1, 0, b"done")),
            "own-channels": mux_stream(
                accept_frame(2, 65536),
                credit_frame(2, 65536),
                data_frame(2, b"reply"),
                close_frame(4, 1, b"refused"),
                data_frame(4, b"late data for a closed channel")),
            "graceful-close": mux_stream(
                open_frame(3, 16),
                data_frame(3, b"\xfe close after the queue drains"),
                credit_frame(3, 100),
                credit_frame(3, 4000)),
            "abort-close": mux_stream(
                open_frame(5, 1024),
                data_frame(5, b"\xff abort"),
                data_frame(5, b"after abort")),
            "many-channels": mux_stream(*[open_frame(2 * i + 1, 4096) for i in range(70)]),
            "bad-open-twice": mux_stream(open_frame(1, 4096), open_frame(1, 4096)),
            "bad-open-own-id": mux_stream(open_frame(6, 4096)),
            "bad-open-metadata": mux_stream(open_frame(1, 4096, b"[1,2]")),
            "bad-data-before-accept": mux_stream(data_frame(2, b"too early")),
            "bad-credit-overflow": mux_stream(accept_frame(2, 1024), credit_frame(2, 64 * 1024 * 1024)),
            "bad-frame": mux_stream(b"\x03\x00\x00"),
        },
        "fuzz_framerecord": l2_corpus(),
        "fuzz_usbids": {
            "vendors-and-classes": b"# seed\n1050  Yubico.com\n\t0407  Yubikey 4/5 OTP+U2F+CCID\n\t\t00  iface\n"
                                   b"1d6b  Linux Foundation\n\t0002  2.0 root hub\nC 03  HID\n",
            "latin1-and-damage": b"0001  Fry\xe9s\r\n\tzz00  bad\n12\n",
        },
    }

    corpora["fuzz_releasesignature"] = release_signature_corpus()
    corpora["fuzz_usbipurbs"] = urb_corpus()
    corpora["fuzz_httphead"] = http_corpus()
    corpora["fuzz_greeting"] = greeting_corpus()
    corpora["fuzz_websocketframes"] = websocket_corpus()
    corpora["fuzz_upgradeanswer"] = upgrade_corpus()
    corpora["fuzz_listingtext"] = {
        "listing": b'{"items":[{"id":1,"name":"lab-a","device":{"kind":"usb","vendor":"1050"},'
                   b'"usb_busid":null},{"id":2,"name":"b\\\"}]","tags":[[],{}]}]}',
        "members-around": b'{"a":[{"x":1}],"items":[{}],"z":{"items":[1]}}',
        "escapes-and-utf8": r'{"items":[{"n":"Z\u00fcrich \ud83d\udd0c \u6771 é"}]}'.encode(),
        "bad-entry-number": b'{"items":[{"id":1},2]}',
        "bad-twice": b'{"items":[],"items":[{}]}',
        "bad-truncated": b'{"items":[{"id":1},{"id":',
        "bad-utf8": b'{"items":[{"n":"\xc3\x28"}]}',
    }

    for target, inputs in corpora.items():
        directory = ROOT / target
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in inputs.items():
            assert len(data) < 2048, (target, name, len(data))
            (directory / name).write_bytes(data)


if __name__ == "__main__":
    main()
