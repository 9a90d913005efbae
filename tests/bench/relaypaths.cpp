#include "bench/relaypaths.h"

#include "bench/benchfailed.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cloop::bench {

namespace {

// socat's default transfer block (8 KiB), made a full TLS record: each read
// on one side becomes one record on the other.
const QString kSocatBlock = QStringLiteral("16384");
// sshd's privilege-separated child chroots into this compiled-in folder,
// which only the system service's start would make.
const QString kPrivsepDir = QStringLiteral("/run/sshd");
const QString kSshdAddress = QStringLiteral("198.18.0.1");
constexpr int kStartMs = 15'000;

// Runs `script` with sh to its end; what it printed when it fails.
QString runScript(const QString &script, bool *ok, int timeoutMs = 60'000)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral("sh"), { QStringLiteral("-c"), script });
    const bool finished = process.waitForFinished(timeoutMs);
    if (!finished) {
        process.kill();
        process.waitForFinished(5000);
    }
    *ok = finished && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    return QString::fromLocal8Bit(process.readAll());
}

void mustRun(const QString &script)
{
    bool ok = false;
    const QString said = runScript(script, &ok);
    if (!ok)
        fail(QStringLiteral("`%1` failed: %2").arg(script, said.trimmed()));
}

bool succeeds(const QString &script)
{
    bool ok = false;
    runScript(script, &ok);
    return ok;
}

void stop(QProcess &process)
{
    if (process.state() == QProcess::NotRunning)
        return;
    process.terminate();
    if (!process.waitForFinished(3000)) {
        process.kill();
        process.waitForFinished(3000);
    }
}

// `count` different free TCP ports on 127.0.0.1: each is held until all are
// found, so none comes twice.
std::vector<quint16> freeLoopbackPorts(int count)
{
    std::vector<int> held;
    std::vector<quint16> ports;
    for (int i = 0; i < count; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(0x7f000001u);
        socklen_t length = sizeof address;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
            || ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) != 0)
            fail(QStringLiteral("cannot find a free port on 127.0.0.1"));
        held.push_back(fd);
        ports.push_back(ntohs(address.sin_port));
    }
    for (const int fd : held)
        ::close(fd);
    return ports;
}

// Whether a socket of this network namespace listens on TCP port `port`.
bool isListening(quint16 port)
{
    QFile table(QStringLiteral("/proc/net/tcp"));
    if (!table.open(QIODevice::ReadOnly))
        return false;
    // "sl local_address rem_address st ...", hexadecimal; 0A is LISTEN.
    const QByteArray local = ':' + QByteArray::number(port, 16).toUpper().rightJustified(4, '0');
    const QList<QByteArray> lines = table.readAll().split('\n');
    for (const QByteArray &line : lines) {
        const QList<QByteArray> fields = line.simplified().split(' ');
        if (fields.size() > 3 && fields.at(1).endsWith(local) && fields.at(3) == "0A")
            return true;
    }
    return false;
}

} // namespace

// --- SocatTlsRelay -------------------------------------------------------------

QString SocatTlsRelay::unavailable()
{
    if (QStandardPaths::findExecutable(QStringLiteral("socat")).isEmpty())
        return QStringLiteral("socat is not installed (scripts/install-deps installs it)");
    if (QStandardPaths::findExecutable(QStringLiteral("openssl")).isEmpty())
        return QStringLiteral("openssl is not installed (scripts/install-deps installs it)");
    return {};
}

SocatTlsRelay::SocatTlsRelay(quint16 targetPort)
{
    if (const QString why = unavailable(); !why.isEmpty())
        fail(why);
    if (!m_dir.isValid())
        fail(QStringLiteral("cannot make a temporary folder for the relay's certificate"));
    const QString certificate = m_dir.filePath(QStringLiteral("relay.crt"));
    const QString key = m_dir.filePath(QStringLiteral("relay.key"));
    // ECDSA P-256, as the hub's own certificate.
    mustRun(QStringLiteral("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
                           "-days 1 -subj /CN=cloop-bench-relay -keyout %1 -out %2 2>&1")
                .arg(shellQuoted(key), shellQuoted(certificate)));
    const QString serving = QStringLiteral("cert=%1,key=%2,verify=0").arg(certificate, key);
    const std::vector<quint16> ports = freeLoopbackPorts(3);
    const quint16 server = ports[0];
    const quint16 relay = ports[1];
    m_listenPort = ports[2];
    const auto listen = [](const QString &type, quint16 port) {
        return QStringLiteral("%1:%2,bind=127.0.0.1,reuseaddr,nodelay").arg(type).arg(port);
    };
    // Each socat connects onwards once its own listener has accepted: the
    // far end starts first.
    startSocat({ listen(QStringLiteral("OPENSSL-LISTEN"), server) + QLatin1Char(',') + serving,
                   QStringLiteral("TCP:127.0.0.1:%1,nodelay").arg(targetPort) },
        server);
    startSocat({ listen(QStringLiteral("OPENSSL-LISTEN"), relay) + QLatin1Char(',') + serving,
                   QStringLiteral("OPENSSL:127.0.0.1:%1,verify=0,nodelay").arg(server) },
        relay);
    startSocat({ listen(QStringLiteral("TCP-LISTEN"), m_listenPort),
                   QStringLiteral("OPENSSL:127.0.0.1:%1,verify=0,nodelay").arg(relay) },
        m_listenPort);
}

void SocatTlsRelay::startSocat(const QStringList &arguments, quint16 port)
{
    auto &process = m_processes.emplace_back(std::make_unique<QProcess>());
    process->start(
        QStringLiteral("socat"), QStringList { QStringLiteral("-b"), kSocatBlock } + arguments);
    if (!process->waitForStarted())
        fail(QStringLiteral("cannot start socat: ") + process->errorString());
    // Only while it is still this socat: a PID is not kept past its end.
    m_undo.push_back(std::make_unique<UndoOnExit>(
        QStringLiteral("grep -qx socat /proc/%1/comm 2>/dev/null && kill %1")
            .arg(process->processId())));
    QElapsedTimer clock;
    clock.start();
    while (!isListening(port)) {
        if (process->state() == QProcess::NotRunning || clock.hasExpired(kStartMs))
            fail(QStringLiteral("socat %1 did not listen: %2")
                     .arg(arguments.join(QLatin1Char(' ')), transcript()));
        QThread::msleep(10);
    }
}

SocatTlsRelay::~SocatTlsRelay()
{
    for (auto it = m_processes.rbegin(); it != m_processes.rend(); ++it)
        stop(**it);
}

QString SocatTlsRelay::transcript()
{
    QString said;
    for (const auto &process : m_processes)
        said += QString::fromLocal8Bit(process->readAllStandardError());
    return said.trimmed();
}

// --- SshEthernetTunnel -----------------------------------------------------------

QString SshEthernetTunnel::unavailable()
{
    if (::geteuid() != 0)
        return QStringLiteral("needs root: network namespaces and tap interfaces");
    if (!QFileInfo(QStringLiteral("/usr/sbin/sshd")).isExecutable())
        return QStringLiteral(
            "sshd is not installed (scripts/install-deps installs openssh-server)");
    for (const QString &program : { QStringLiteral("ssh"), QStringLiteral("ssh-keygen") }) {
        if (QStandardPaths::findExecutable(program).isEmpty())
            return QStringLiteral("%1 is not installed (scripts/install-deps installs "
                                  "openssh-client)")
                .arg(program);
    }
    if (!QFileInfo::exists(QStringLiteral("/dev/net/tun")))
        return QStringLiteral("there is no /dev/net/tun");
    return {};
}

SshEthernetTunnel::SshEthernetTunnel()
    : m_server(QStringLiteral("cloop-bench-sshd-%1").arg(::getpid()))
    , m_client(QStringLiteral("cloop-bench-ssh-%1").arg(::getpid()))
{
    if (const QString why = unavailable(); !why.isEmpty())
        fail(why);
    if (!m_dir.isValid())
        fail(QStringLiteral("cannot make a temporary folder for sshd"));
    if (!QFileInfo::exists(kPrivsepDir)) {
        mustRun(QStringLiteral("mkdir -m 0755 %1").arg(kPrivsepDir));
        m_undoPrivsepDir
            = std::make_unique<UndoOnExit>(QStringLiteral("rmdir %1 2>/dev/null").arg(kPrivsepDir));
    }
    // Whatever still runs in the two namespaces (sshd's session, iperf3) is
    // the benchmark's own: ended by its PID, then the namespaces go, and the
    // veth pair with them.
    m_undoNamespaces = std::make_unique<UndoOnExit>(
        QStringLiteral("for ns in %1 %2; do for p in $(ip netns pids $ns 2>/dev/null); do "
                       "kill $p 2>/dev/null; done; done; sleep 0.2; "
                       "for ns in %1 %2; do for p in $(ip netns pids $ns 2>/dev/null); do "
                       "kill -9 $p 2>/dev/null; done; ip netns delete $ns 2>/dev/null; done")
            .arg(m_server, m_client));
    mustRun(QStringLiteral("set -e; ip netns add %1; ip netns add %2; "
                           "ip link add clb-sshd netns %1 type veth peer name clb-ssh netns %2; "
                           "ip -n %1 link set lo up; ip -n %2 link set lo up; "
                           "ip -n %1 addr add %3/30 dev clb-sshd; ip -n %1 link set clb-sshd up; "
                           "ip -n %2 addr add 198.18.0.2/30 dev clb-ssh; "
                           "ip -n %2 link set clb-ssh up")
                .arg(m_server, m_client, kSshdAddress));

    const QString dir = m_dir.path();
    mustRun(QStringLiteral("set -e; cd %1; "
                           "ssh-keygen -q -t ed25519 -N '' -C cloop-bench-host -f host_key; "
                           "ssh-keygen -q -t ed25519 -N '' -C cloop-bench-client -f client_key; "
                           "cp client_key.pub authorized_keys; "
                           "echo \"%2 $(cut -d' ' -f1,2 host_key.pub)\" > known_hosts")
                .arg(shellQuoted(dir), kSshdAddress));
    QFile config(m_dir.filePath(QStringLiteral("sshd_config")));
    if (!config.open(QIODevice::WriteOnly))
        fail(QStringLiteral("cannot write sshd_config"));
    // StrictModes would refuse the authorized keys below the world-writable /tmp.
    config.write(QStringLiteral("ListenAddress %1:22\n"
                                "HostKey %2/host_key\n"
                                "AuthorizedKeysFile %2/authorized_keys\n"
                                "PidFile none\n"
                                "PermitRootLogin prohibit-password\n"
                                "PubkeyAuthentication yes\n"
                                "PasswordAuthentication no\n"
                                "KbdInteractiveAuthentication no\n"
                                "UsePAM no\n"
                                "StrictModes no\n"
                                "PermitTunnel ethernet\n"
                                "AllowTcpForwarding no\n"
                                "AllowAgentForwarding no\n"
                                "X11Forwarding no\n"
                                "PrintMotd no\n"
                                "PrintLastLog no\n"
                                "LogLevel INFO\n")
                     .arg(kSshdAddress, dir)
                     .toLocal8Bit());
    config.close();

    // sshd re-executes itself, which it only does from an absolute path.
    m_sshd.setReadChannel(QProcess::StandardError);
    m_sshd.start(QStringLiteral("ip"),
        { QStringLiteral("netns"), QStringLiteral("exec"), m_server,
            QStringLiteral("/usr/sbin/sshd"), QStringLiteral("-D"), QStringLiteral("-e"),
            QStringLiteral("-f"), config.fileName() });
    QElapsedTimer clock;
    clock.start();
    while (!m_sshdSaid.contains("Server listening on")) {
        if (m_sshd.state() == QProcess::NotRunning || clock.hasExpired(kStartMs))
            fail(QStringLiteral("sshd did not start: ") + transcript());
        m_sshd.waitForReadyRead(100);
        m_sshdSaid += m_sshd.readAllStandardError();
    }

    // A session with a terminal (-tt) that only sleeps, beside the tunnel:
    // OpenSSH sets TCP_NODELAY on an interactive connection, and only then
    // on sshd's side (with -N, only ssh's side would have it; checked with
    // strace on OpenSSH 9.2).
    m_ssh.setStandardInputFile(QProcess::nullDevice());
    QStringList ssh { QStringLiteral("netns"), QStringLiteral("exec"), m_client,
        QStringLiteral("ssh"), QStringLiteral("-tt"), QStringLiteral("-F"),
        QStringLiteral("/dev/null"), QStringLiteral("-i"),
        m_dir.filePath(QStringLiteral("client_key")) };
    const QStringList options {
        QStringLiteral("IdentitiesOnly=yes"),
        QStringLiteral("BatchMode=yes"),
        QStringLiteral("UserKnownHostsFile=") + m_dir.filePath(QStringLiteral("known_hosts")),
        QStringLiteral("GlobalKnownHostsFile=/dev/null"),
        QStringLiteral("StrictHostKeyChecking=yes"),
        QStringLiteral("UpdateHostKeys=no"),
        QStringLiteral("ExitOnForwardFailure=yes"),
        // Before -w: the first value given wins, and -w alone asks for a
        // point-to-point tunnel, which this sshd refuses.
        QStringLiteral("Tunnel=ethernet"),
        QStringLiteral("Ciphers=aes256-gcm@openssh.com"),
        QStringLiteral("IPQoS=lowdelay"),
        QStringLiteral("LogLevel=ERROR"),
    };
    for (const QString &option : options)
        ssh << QStringLiteral("-o") << option;
    ssh << QStringLiteral("-w") << QStringLiteral("0:0") << QStringLiteral("root@") + kSshdAddress
        << QStringLiteral("exec sleep infinity");
    m_ssh.start(QStringLiteral("ip"), ssh);
    clock.restart();
    while (!succeeds(QStringLiteral("ip -n %1 link show tap0 && ip -n %2 link show tap0")
                         .arg(m_server, m_client))) {
        if (m_ssh.state() == QProcess::NotRunning || clock.hasExpired(kStartMs))
            fail(QStringLiteral("the SSH tunnel did not come up: ") + transcript());
        QThread::msleep(100);
    }
    mustRun(QStringLiteral("set -e; ip -n %1 addr add %3/24 dev tap0; ip -n %1 link set tap0 up; "
                           "ip -n %2 addr add %4/24 dev tap0; ip -n %2 link set tap0 up")
                .arg(m_server, m_client, serverAddress(), clientAddress()));
}

SshEthernetTunnel::~SshEthernetTunnel()
{
    stop(m_ssh);
    stop(m_sshd);
    m_undoNamespaces->runNow();
    if (m_undoPrivsepDir)
        m_undoPrivsepDir->runNow();
}

QStringList SshEthernetTunnel::inServer(const QStringList &command) const
{
    return QStringList { QStringLiteral("ip"), QStringLiteral("netns"), QStringLiteral("exec"),
        m_server }
    + command;
}

QString SshEthernetTunnel::transcript()
{
    m_sshdSaid += m_sshd.readAllStandardError();
    m_sshSaid += m_ssh.readAllStandardError() + m_ssh.readAllStandardOutput();
    return QStringLiteral("sshd: %1\nssh: %2")
        .arg(QString::fromLocal8Bit(m_sshdSaid).trimmed(),
            QString::fromLocal8Bit(m_sshSaid).trimmed());
}

} // namespace cloop::bench
