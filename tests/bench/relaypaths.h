#pragma once

// The two paths on this machine the chain (forwarder → hub → agent) is
// measured against in the same run: a relay written in C that terminates
// TLS twice (socat), for bench_usbip, and an OpenSSH Ethernet tunnel, for
// bench_segment. Both have TCP_NODELAY on every TCP
// socket, as the chain has. Each is set up by its constructor, which throws
// BenchFailed (benchfailed.h) when it cannot be, and taken down by its
// destructor or, at a stopping signal, by the undo scripts it registers
// (benchcleanup.h). Nothing but loopback and namespaces they make
// themselves is used.

#include "bench/benchcleanup.h"

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <vector>

namespace cloop::bench {

// client → relay → server on 127.0.0.1, three socat processes and two TLS
// hops (a throwaway self-signed P-256 certificate from the openssl CLI):
//   TCP-LISTEN:listenPort → OPENSSL:b | OPENSSL-LISTEN:b → OPENSSL:c |
//   OPENSSL-LISTEN:c → TCP:targetPort
// Carries one connection; its processes end with it.
class SocatTlsRelay
{
public:
    // Why the relay cannot be made here (socat or openssl missing), or empty.
    static QString unavailable();

    explicit SocatTlsRelay(quint16 targetPort);
    ~SocatTlsRelay();
    SocatTlsRelay(const SocatTlsRelay &) = delete;
    SocatTlsRelay &operator=(const SocatTlsRelay &) = delete;

    // Where the client connects, on 127.0.0.1.
    quint16 listenPort() const { return m_listenPort; }
    // What the socat processes said, for a failure's message.
    QString transcript();

private:
    void startSocat(const QStringList &arguments, quint16 port);

    QTemporaryDir m_dir;
    std::vector<std::unique_ptr<QProcess>> m_processes;
    std::vector<std::unique_ptr<UndoOnExit>> m_undo;
    quint16 m_listenPort = 0;
};

// Two network namespaces made for it, joined by a veth pair: an sshd of its
// own in the server namespace (its own configuration, host key and
// authorized client key in a temporary folder, listening only on that
// namespace's veth address; never the system's sshd), and
// `ssh -w 0:0 -o Tunnel=ethernet` from the client namespace, which makes
// tap0 at both ends. The taps are addressed serverAddress()/24 and
// clientAddress()/24 and up when the constructor returns.
class SshEthernetTunnel
{
public:
    // Why the tunnel cannot be made here (not root, OpenSSH missing), or empty.
    static QString unavailable();

    SshEthernetTunnel();
    ~SshEthernetTunnel();
    SshEthernetTunnel(const SshEthernetTunnel &) = delete;
    SshEthernetTunnel &operator=(const SshEthernetTunnel &) = delete;

    static QString serverAddress() { return QStringLiteral("203.0.113.1"); }
    static QString clientAddress() { return QStringLiteral("203.0.113.10"); }
    // `ip netns exec SERVER-NAMESPACE` before `command`.
    QStringList inServer(const QStringList &command) const;
    QString serverNamespace() const { return m_server; }
    QString clientNamespace() const { return m_client; }
    // What sshd and ssh said, for a failure's message.
    QString transcript();

private:
    QString m_server;
    QString m_client;
    QTemporaryDir m_dir;
    // Destroyed in reverse: the namespaces go before the folder sshd needs.
    std::unique_ptr<UndoOnExit> m_undoPrivsepDir;
    std::unique_ptr<UndoOnExit> m_undoNamespaces;
    QProcess m_sshd;
    QProcess m_ssh;
    QByteArray m_sshdSaid;
    QByteArray m_sshSaid;
};

} // namespace cloop::bench
