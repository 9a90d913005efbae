#include "tests/support/usbstandin/usbkernelstandin.h"
#include "tests/support/usbstandin/blockingio.h"

#include "common/device/usb/usbipprotocol.h"
#include "common/util/fd.h"
#include "tests/support/usbstandin/usbfixture.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalServer>
#include <QLocalSocket>
#include <QPointer>
#include <QRegularExpression>
#include <QThread>

namespace cloop::testsupport::usb {

namespace usbip = device::usb::usbip;
using util::Fd;

namespace {

constexpr int kMaxBusIds = 16; // MAX_BUSID in stub_main.c
constexpr qsizetype kBusIdSize = 32; // BUSID_SIZE
constexpr qsizetype kLoopbackLimit = 64 * 1024 * 1024;
constexpr qsizetype kStoredControlLimit = 4096;
// More than any test moves in one URB: a header asking for more is
// garbage, and the connection goes as the kernel's does when it cannot
// allocate the buffer.
constexpr qsizetype kMaxPayload = 64 * 1024 * 1024 + 64 * 1024;
constexpr qint32 kStall = -EPIPE;
constexpr quint32 kUrbDirIn = 0x200; // URB_DIR_IN, as vhci sends it
constexpr int kSdevAvailable = 1;
constexpr int kSdevUsed = 2;
constexpr int kVdevFree = 4;
constexpr int kVdevUsed = 6;
constexpr quint8 kHubClass = 0x09;
// What write() dispatches to for a file no driver here answers.
constexpr int kPlainFile = -1;

const QString kDevicesDir = QStringLiteral("/sys/bus/usb/devices");
const QString kDriversDir = QStringLiteral("/sys/bus/usb/drivers");
const QString kVhciDir = QStringLiteral("/sys/devices/platform/vhci_hcd.0");
const QString kUsbipHost = QStringLiteral("usbip-host");
const QString kUsbDriver = QStringLiteral("usb");

Error standInError(const QString &message)
{
    return Error::make(QStringLiteral("usb_standin"), message);
}

bool isUnder(QStringView path, QStringView top)
{
    return path == top
        || (path.startsWith(top) && path.size() > top.size()
            && path.at(top.size()) == QLatin1Char('/'));
}

int socketType(int fd)
{
    int type = 0;
    socklen_t length = sizeof type;
    if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0)
        return -1;
    return type;
}

// One number as sscanf's %d / %u reads it: white space, a sign, digits;
// whatever follows is left for the next.
std::optional<qint64> scanNumber(const QByteArray &text, qsizetype &at)
{
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text.at(at))))
        ++at;
    bool negative = false;
    if (at < text.size() && (text.at(at) == '-' || text.at(at) == '+'))
        negative = text.at(at++) == '-';
    const qsizetype start = at;
    qint64 value = 0;
    while (at < text.size() && text.at(at) >= '0' && text.at(at) <= '9') {
        value = std::min<qint64>(value * 10 + (text.at(at) - '0'), qint64(1) << 40);
        ++at;
    }
    if (at == start)
        return std::nullopt;
    return negative ? -value : value;
}

// kstrtoint: a sign, digits and at most one newline, nothing else.
std::optional<int> parseKernelInt(QByteArray text)
{
    if (text.endsWith('\n'))
        text.chop(1);
    qsizetype at = 0;
    if (text.isEmpty() || std::isspace(static_cast<unsigned char>(text.at(0))))
        return std::nullopt;
    const auto value = scanNumber(text, at);
    if (!value || at != text.size() || *value > INT_MAX || *value < INT_MIN)
        return std::nullopt;
    return int(*value);
}

// What bus_find_device_by_name compares (sysfs_streq): the name without
// one trailing newline.
QString sysfsName(QByteArray bytes)
{
    if (bytes.endsWith('\n'))
        bytes.chop(1);
    return QString::fromUtf8(bytes);
}

// What the kernel's BUSID_SIZE string copies keep: up to the first NUL.
QByteArray cString(const QByteArray &bytes)
{
    const qsizetype nul = bytes.indexOf('\0');
    return nul < 0 ? bytes : bytes.left(nul);
}

void putLe16(QByteArray &bytes, qsizetype at, quint16 value)
{
    bytes[at] = char(value & 0xff);
    bytes[at + 1] = char(value >> 8);
}

quint16 le16(const QByteArray &bytes, qsizetype at)
{
    return quint16(quint8(bytes.at(at)) | (quint8(bytes.at(at + 1)) << 8));
}

QByteArray stringDescriptor(const QString &text)
{
    const QString shown = text.left(126);
    QByteArray bytes(2 + 2 * shown.size(), '\0');
    bytes[0] = char(bytes.size());
    bytes[1] = char(0x03);
    for (qsizetype i = 0; i < shown.size(); ++i)
        putLe16(bytes, 2 + 2 * i, shown.at(i).unicode());
    return bytes;
}

// The device behind one export: its descriptors come from the fixture;
// its state (stored vendor data, loopback FIFO) starts afresh with every
// connection, as the stub's USB reset at teardown would leave a device.
class SimulatedDevice
{
public:
    explicit SimulatedDevice(FixtureDevice device)
        : m_device(std::move(device))
    { }

    UsbTransferResult control(
        const std::array<quint8, 8> &setup, const QByteArray &out, qint32 length)
    {
        const int request = (setup[0] << 8) | setup[1];
        const quint16 value = quint16(setup[2] | (setup[3] << 8));
        const quint16 index = quint16(setup[4] | (setup[5] << 8));
        const qint32 limit = std::min<qint32>(quint16(setup[6] | (setup[7] << 8)), length);
        const auto answer = [limit](QByteArray data) {
            data.truncate(std::max(limit, 0));
            return UsbTransferResult { 0, qint32(data.size()), data };
        };
        const UsbTransferResult done { 0, 0, {} };
        switch (request) {
        case 0x8006: // GET_DESCRIPTOR
            switch (value >> 8) {
            case 0x01:
                return answer(deviceDescriptor());
            case 0x02:
                if ((value & 0xff) == 0)
                    return answer(configurationDescriptor());
                break;
            case 0x03:
                if (const auto text = string(value & 0xff))
                    return answer(*text);
                break;
            default:
                break;
            }
            break;
        case 0x8000: // GET_STATUS: device, interface, endpoint
        case 0x8100:
        case 0x8200:
            return answer(QByteArray(2, '\0'));
        case 0x8008: // GET_CONFIGURATION
            return answer(QByteArray(1, char(m_configuration)));
        case 0x0009: // SET_CONFIGURATION
            if (value <= 1) {
                m_configuration = value;
                return done;
            }
            break;
        case 0x010b: // SET_INTERFACE: the one interface has one setting
            if (value == 0 && index == 0)
                return done;
            break;
        case 0x0201: // CLEAR_FEATURE(ENDPOINT_HALT)
            if (value == 0)
                return done;
            break;
        case 0x4001: // vendor OUT: keep the data
            m_stored = out.left(kStoredControlLimit);
            return UsbTransferResult { 0, qint32(out.size()), {} };
        case 0xc002: // vendor IN: give it back
            return answer(m_stored);
        default:
            break;
        }
        return UsbTransferResult { kStall, 0, {} };
    }

    UsbTransferResult bulk(quint32 endpoint, bool in, const QByteArray &out, qint32 length)
    {
        if (endpoint != 1)
            return UsbTransferResult { kStall, 0, {} };
        const qsizetype queued = m_fifo.size() - m_fifoStart;
        if (!in) {
            const qsizetype accepted = std::min(out.size(), kLoopbackLimit - queued);
            m_fifo.append(out.constData(), accepted);
            return UsbTransferResult { 0, qint32(accepted), {} };
        }
        // At once with what is there: a test never waits on a device that
        // has nothing to say.
        const qsizetype taken = std::min<qsizetype>(std::max(length, 0), queued);
        QByteArray data = m_fifo.mid(m_fifoStart, taken);
        m_fifoStart += taken;
        if (m_fifoStart == m_fifo.size()) {
            m_fifo.clear();
            m_fifoStart = 0;
        } else if (m_fifoStart > 1024 * 1024 && m_fifoStart * 2 > m_fifo.size()) {
            m_fifo.remove(0, m_fifoStart);
            m_fifoStart = 0;
        }
        return UsbTransferResult { 0, qint32(data.size()), data };
    }

private:
    QByteArray deviceDescriptor() const
    {
        QByteArray bytes(18, '\0');
        bytes[0] = char(18);
        bytes[1] = char(0x01);
        putLe16(bytes, 2, 0x0200);
        bytes[4] = char(m_device.deviceClass);
        bytes[5] = char(m_device.deviceSubClass);
        bytes[6] = char(m_device.deviceProtocol);
        bytes[7] = char(64);
        putLe16(bytes, 8, m_device.vendorId);
        putLe16(bytes, 10, m_device.productId);
        putLe16(bytes, 12, m_device.bcdDevice);
        bytes[14] = char(m_device.manufacturer.isEmpty() ? 0 : 1);
        bytes[15] = char(m_device.product.isEmpty() ? 0 : 2);
        bytes[16] = char(m_device.serial.isEmpty() ? 0 : 3);
        bytes[17] = char(1);
        return bytes;
    }

    QByteArray configurationDescriptor() const
    {
        const FixtureInterface interface = m_device.interfaces.value(0, FixtureInterface {});
        const quint8 bytes[32] = {
            // configuration 1: 32 bytes in all, one interface, bus powered, 100 mA
            9,
            0x02,
            32,
            0,
            1,
            1,
            0,
            0x80,
            50,
            // interface 0, two endpoints
            9,
            0x04,
            0,
            0,
            2,
            interface.interfaceClass,
            interface.interfaceSubClass,
            interface.interfaceProtocol,
            0,
            // bulk 0x01 OUT and 0x81 IN, 512 bytes
            7,
            0x05,
            0x01,
            0x02,
            0x00,
            0x02,
            0,
            7,
            0x05,
            0x81,
            0x02,
            0x00,
            0x02,
            0,
        };
        return QByteArray(reinterpret_cast<const char *>(bytes), sizeof bytes);
    }

    static std::optional<QByteArray> optionalString(const QString &text)
    {
        return text.isEmpty() ? std::nullopt : std::optional(stringDescriptor(text));
    }

    std::optional<QByteArray> string(int index) const
    {
        switch (index) {
        case 0:
            return QByteArray("\x04\x03\x09\x04", 4); // US English only
        case 1:
            return optionalString(m_device.manufacturer);
        case 2:
            return optionalString(m_device.product);
        case 3:
            return optionalString(m_device.serial);
        default:
            return std::nullopt;
        }
    }

    FixtureDevice m_device;
    int m_configuration = 1;
    QByteArray m_stored;
    QByteArray m_fifo;
    qsizetype m_fifoStart = 0;
};

// One connection the stand-in took over, with the thread serving it.
struct Session
{
    Fd fd; // the stand-in's duplicate, as the kernel keeps its own reference
    std::thread thread;
    std::atomic<bool> finished { false };

    // Wakes the thread out of its blocking IO; the peer reads EOF.
    void shutdownConnection() const { ::shutdown(fd.get(), SHUT_RDWR); }
};

struct StubSession final : Session
{
    explicit StubSession(FixtureDevice device)
        : simulated(std::move(device))
    { }
    QString busId;
    quint32 deviceId = 0;
    SimulatedDevice simulated;
};

struct Pending
{
    quint32 direction = usbip::kDirectionOut;
    qint32 length = 0;
    bool enumeration = false;
    bool done = false;
    std::optional<UsbTransferResult> result; // done without one: the connection ended
};

struct PortSession final : Session
{
    int port = 0; // index into the ports, which is the global port number
    quint32 deviceId = 0;
    std::mutex writeMutex; // one URB on the wire at a time
    std::mutex pendingMutex;
    std::condition_variable answered;
    std::map<quint32, std::shared_ptr<Pending>> pending;
    bool ended = false;
};

// stub_main.c's bus_id_priv states. A free slot starts as Other (0).
enum class SlotState
{
    Other,
    Removed,
    Added,
    Alloc
};

struct MatchSlot
{
    QByteArray name; // empty: free
    SlotState state = SlotState::Other;
    // Whether usbip-host ever probed a device for it: the kernel's rebind
    // uses that device (busid_priv->udev), NULL until then.
    bool probed = false;
};

struct StubDevice
{
    quint32 deviceId = 0;
    FixtureDevice device;
    int status = kSdevAvailable;
    std::shared_ptr<StubSession> session;
};

struct VhciPort
{
    int status = kVdevFree;
    quint32 speed = 0;
    quint32 deviceId = 0;
    quint32 sockfd = 0;
    QString localBusId; // empty until enumerated
    int deviceNumber = 0;
    QString node;
    std::shared_ptr<PortSession> session;
};

struct Watcher
{
    std::unique_ptr<QObject> context; // lives in the registering thread
    std::function<void()> changed;
};

// Runs the control socket's transfers off the event loop, in order.
class JobQueue
{
public:
    JobQueue()
        : m_thread([this] { run(); })
    { }
    ~JobQueue()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }
    void post(std::function<void()> job)
    {
        {
            std::lock_guard lock(m_mutex);
            m_jobs.push_back(std::move(job));
        }
        m_changed.notify_all();
    }

private:
    void run()
    {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(m_mutex);
                m_changed.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
                if (m_jobs.empty())
                    return;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            job();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<std::function<void()>> m_jobs;
    bool m_stopping = false;
    std::thread m_thread; // last: starts once the rest is built
};

QJsonObject transferAnswer(const Result<UsbTransferResult> &result)
{
    if (!result)
        return QJsonObject { { QStringLiteral("error"), result.error().message } };
    return QJsonObject { { QStringLiteral("status"), result->status },
        { QStringLiteral("actual"), result->actual },
        { QStringLiteral("data"), QString::fromLatin1(result->data.toBase64()) } };
}

class ControlServer final : public QObject
{
public:
    ControlServer(UsbKernelStandIn &standIn, JobQueue &jobs)
        : m_standIn(standIn)
        , m_jobs(jobs)
    {
        connect(&m_server, &QLocalServer::newConnection, this, [this] { acceptConnections(); });
    }
    ~ControlServer() override
    {
        // The sockets are children, so QObject would delete them after the
        // members their signals reach into.
        const auto sockets = findChildren<QLocalSocket *>(Qt::FindDirectChildrenOnly);
        for (QLocalSocket *socket : sockets) {
            disconnect(socket, nullptr, this, nullptr);
            delete socket;
        }
    }
    ControlServer(const ControlServer &) = delete;
    ControlServer &operator=(const ControlServer &) = delete;

    Status listen(const QString &path)
    {
        QLocalServer::removeServer(path);
        if (!m_server.listen(path))
            return standInError(
                QStringLiteral("cannot listen on %1: %2").arg(path, m_server.errorString()));
        return {};
    }

private:
    struct Connection
    {
        QByteArray buffer;
        bool busy = false; // a transfer is running; later lines wait
    };

    void acceptConnections()
    {
        while (QLocalSocket *socket = m_server.nextPendingConnection()) {
            socket->setParent(this);
            m_connections[socket] = {};
            connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
                const auto found = m_connections.find(socket);
                if (found == m_connections.end())
                    return;
                found->second.buffer += socket->readAll();
                processLines(socket);
            });
            connect(socket, &QLocalSocket::disconnected, this, [this, socket] {
                m_connections.erase(socket);
                socket->deleteLater();
            });
            if (socket->bytesAvailable() > 0) {
                m_connections[socket].buffer += socket->readAll();
                processLines(socket);
            }
        }
    }

    void processLines(QLocalSocket *socket)
    {
        for (;;) {
            const auto found = m_connections.find(socket);
            if (found == m_connections.end() || found->second.busy)
                return;
            Connection &connection = found->second;
            const qsizetype end = connection.buffer.indexOf('\n');
            if (end < 0)
                return;
            const QByteArray line = connection.buffer.left(end);
            connection.buffer.remove(0, end + 1);
            const QJsonDocument document = QJsonDocument::fromJson(line);
            if (!document.isObject()) {
                reply(socket,
                    QJsonObject {
                        { QStringLiteral("error"), QStringLiteral("not a JSON object") } });
                continue;
            }
            const QJsonObject command = document.object();
            const QString op = command.value(QStringLiteral("op")).toString();
            if (op != u"control" && op != u"bulk" && op != u"measure") {
                reply(socket, m_standIn.handleCommand(command));
                continue;
            }
            // A transfer waits for its answer through the whole forwarding
            // chain, which may run in this very event loop.
            connection.busy = true;
            QPointer<QLocalSocket> guarded(socket);
            m_jobs.post([this, guarded, command] {
                const QJsonObject answer = m_standIn.handleCommand(command);
                QMetaObject::invokeMethod(
                    this,
                    [this, guarded, answer] {
                        if (!guarded)
                            return;
                        const auto waiting = m_connections.find(guarded.data());
                        if (waiting == m_connections.end())
                            return;
                        waiting->second.busy = false;
                        reply(guarded.data(), answer);
                        processLines(guarded.data());
                    },
                    Qt::QueuedConnection);
            });
            return;
        }
    }

    static void reply(QLocalSocket *socket, const QJsonObject &answer)
    {
        socket->write(QJsonDocument(answer).toJson(QJsonDocument::Compact) + '\n');
    }

    UsbKernelStandIn &m_standIn;
    JobQueue &m_jobs;
    QLocalServer m_server;
    std::map<QLocalSocket *, Connection> m_connections;
};

} // namespace

struct UsbKernelStandIn::Private
{
    explicit Private(device::SysfsRoot sysfsRoots)
        : roots(std::move(sysfsRoots))
    { }

    using Taken = std::vector<std::shared_ptr<Session>>;

    device::SysfsRoot roots;

    // Guards everything below (up to the watchers) and every edit of the tree.
    mutable std::mutex mutex;
    std::array<MatchSlot, kMaxBusIds> matchTable;
    std::map<QString, StubDevice> stubs; // devices bound to usbip-host
    std::map<QString, FixtureDevice> unplugged;
    std::map<int, int> lastDeviceNumber; // per bus
    int hcPorts = 0;
    std::vector<VhciPort> ports; // hs 0..hc-1, then ss hc..2hc-1
    // Every connection whose thread was started, until the thread is
    // joined. Whoever takes one out of here joins it.
    std::vector<std::shared_ptr<Session>> sessions;

    // Per stand-in, as vhci's is per root hub: monotonic, shared by ports.
    std::atomic<quint32> nextSequence { 1 };

    std::mutex watchersMutex;
    std::vector<Watcher> watchers;

    std::unique_ptr<JobQueue> jobs;
    std::unique_ptr<ControlServer> server;
    QString controlPath;

    // --- helpers, `mutex` held ---------------------------------------------------

    std::optional<QString> devicePathLocked(const QString &busId) const
    {
        if (busId.isEmpty() || busId.contains(QLatin1Char('/')) || busId.contains(QLatin1Char(':')))
            return std::nullopt;
        return roots.resolve(kDevicesDir + QLatin1Char('/') + busId);
    }

    MatchSlot *findSlotLocked(const QByteArray &name)
    {
        for (MatchSlot &slot : matchTable) {
            if (!slot.name.isEmpty() && slot.name == name)
                return &slot;
        }
        return nullptr;
    }

    void writeMatchTableLocked()
    {
        QByteArray text;
        for (const MatchSlot &slot : matchTable) {
            if (!slot.name.isEmpty())
                text += slot.name + ' ';
        }
        text += '\n';
        logFailure(UsbFixture::writeFile(
            roots.path(kDriversDir + QStringLiteral("/usbip-host/match_busid")), text));
    }

    static void logFailure(const Status &status)
    {
        if (!status)
            qWarning("usb stand-in: %s", qPrintable(status.error().message));
    }

    std::shared_ptr<Session> takeLocked(const std::shared_ptr<Session> &session)
    {
        const auto found = std::find(sessions.begin(), sessions.end(), session);
        if (!session || found == sessions.end())
            return nullptr;
        std::shared_ptr<Session> taken = *found;
        sessions.erase(found);
        return taken;
    }

    Taken takeFinishedLocked()
    {
        Taken taken;
        for (auto it = sessions.begin(); it != sessions.end();) {
            if ((*it)->finished) {
                taken.push_back(*it);
                it = sessions.erase(it);
            } else {
                ++it;
            }
        }
        return taken;
    }

    // Never with `mutex` held: an ending connection takes it to tidy up.
    static void join(const std::shared_ptr<Session> &session)
    {
        if (session && session->thread.joinable()
            && session->thread.get_id() != std::this_thread::get_id())
            session->thread.join();
    }
    static void join(const Taken &taken)
    {
        for (const auto &session : taken)
            join(session);
    }

    void reap()
    {
        Taken finished;
        {
            std::lock_guard lock(mutex);
            finished = takeFinishedLocked();
        }
        join(finished);
    }

    void noteDeviceNumberLocked(int bus, int deviceNumber)
    {
        int &last = lastDeviceNumber[bus];
        last = std::max(last, deviceNumber);
    }

    // The kernel hands out device numbers per bus in turn; a re-plugged
    // device gets a new one.
    int nextDeviceNumberLocked(int bus)
    {
        int &last = lastDeviceNumber[bus];
        last = std::max(last, 1); // the root hub's
        const QString prefix = QString::number(bus) + QLatin1Char('-');
        for (const QString &name : roots.list(kDevicesDir)) {
            if (!name.startsWith(prefix) || name.contains(QLatin1Char(':')))
                continue;
            const QString devnum
                = kDevicesDir + QLatin1Char('/') + name + QStringLiteral("/devnum");
            last = std::max(last, roots.readAttribute(devnum).value_or(QString()).toInt());
        }
        return ++last;
    }

    void ensurePortsLocked()
    {
        if (!ports.empty())
            return;
        const int nports
            = roots.readAttribute(kVhciDir + QStringLiteral("/nports")).value_or(QString()).toInt();
        if (nports <= 0 || nports % 2)
            return;
        hcPorts = nports / 2;
        ports.resize(size_t(nports));
    }

    void writeVhciStatusLocked()
    {
        QList<VhciPortLine> lines;
        for (size_t index = 0; index < ports.size(); ++index) {
            const VhciPort &port = ports[index];
            VhciPortLine line;
            line.superSpeed = int(index) >= hcPorts;
            line.port = int(index);
            line.status = port.status;
            line.speed = port.speed;
            line.deviceId = port.deviceId;
            line.sockfd = port.sockfd;
            line.localBusId = port.localBusId.isEmpty() ? QStringLiteral("0-0") : port.localBusId;
            lines.append(line);
        }
        logFailure(UsbFixture::writeFile(
            roots.path(kVhciDir + QStringLiteral("/status")), vhciStatusText(lines)));
    }

    // vhci_device_reset + the port's release: the local device goes, the
    // port is free.
    void releasePortLocked(size_t index)
    {
        VhciPort &port = ports[index];
        if (!port.localBusId.isEmpty()) {
            logFailure(UsbFixture::removeDevice(roots, port.localBusId));
            QFile::remove(roots.path(port.node));
        }
        port = VhciPort {};
        writeVhciStatusLocked();
    }

    // stub_disconnect: the export's connection is shut down, the slot goes
    // back to Added, the stub's files go. Returns the session to join.
    std::shared_ptr<Session> disconnectStubLocked(const QString &busId)
    {
        const auto found = stubs.find(busId);
        if (found == stubs.end())
            return nullptr;
        std::shared_ptr<StubSession> session = found->second.session;
        stubs.erase(found);
        if (MatchSlot *slot = findSlotLocked(busId.toUtf8());
            slot && slot->state == SlotState::Alloc)
            slot->state = SlotState::Added;
        if (const auto path = devicePathLocked(busId)) {
            QFile::remove(roots.path(*path + QStringLiteral("/usbip_status")));
            QFile::remove(roots.path(*path + QStringLiteral("/usbip_sockfd")));
        }
        if (!session)
            return nullptr;
        session->shutdownConnection();
        return takeLocked(session);
    }

    void writeUsbipStatusLocked(const QString &busId, int status)
    {
        if (const auto path = devicePathLocked(busId))
            logFailure(UsbFixture::writeFile(roots.path(*path + QStringLiteral("/usbip_status")),
                QByteArray::number(status) + '\n'));
    }

    // --- writes: 0 or the errno the kernel answers ----------------------------

    int bind(const QString &driver, const QByteArray &bytes)
    {
        std::lock_guard lock(mutex);
        const QString busId = sysfsName(bytes);
        const auto path = devicePathLocked(busId);
        if (!path || (driver != kUsbDriver && driver != kUsbipHost))
            return ENODEV;
        if (!UsbFixture::driverOf(roots, busId).isEmpty())
            return EBUSY;
        if (driver == kUsbDriver) {
            logFailure(UsbFixture::setDriver(roots, busId, kUsbDriver));
            return 0;
        }
        // stub_probe: only what match_busid names, by the device's own
        // name; never a hub.
        MatchSlot *slot = findSlotLocked(busId.toUtf8());
        if (!slot || slot->state == SlotState::Removed || slot->state == SlotState::Other)
            return ENODEV;
        const auto device = UsbFixture::readDevice(roots, busId);
        if (!device || device->deviceClass == kHubClass)
            return ENODEV;
        const int busNumber
            = roots.readAttribute(*path + QStringLiteral("/busnum")).value_or(QString()).toInt();
        // The devid every command must carry: fixed when the stub binds.
        StubDevice stub;
        stub.deviceId = (quint32(busNumber) << 16) | quint32(device->deviceNumber & 0xffff);
        stub.device = *device;
        stubs[busId] = stub;
        slot->state = SlotState::Alloc;
        slot->probed = true;
        logFailure(UsbFixture::setDriver(roots, busId, kUsbipHost));
        logFailure(UsbFixture::writeFile(roots.path(*path + QStringLiteral("/usbip_status")),
            QByteArray::number(kSdevAvailable) + '\n'));
        logFailure(UsbFixture::writeFile(roots.path(*path + QStringLiteral("/usbip_sockfd")), {}));
        return 0;
    }

    int unbind(const QString &driver, const QByteArray &bytes)
    {
        std::shared_ptr<Session> stopped;
        {
            std::lock_guard lock(mutex);
            const QString busId = sysfsName(bytes);
            if (!devicePathLocked(busId) || UsbFixture::driverOf(roots, busId) != driver)
                return ENODEV;
            if (driver == kUsbipHost)
                stopped = disconnectStubLocked(busId);
            logFailure(UsbFixture::setDriver(roots, busId, {}));
        }
        join(stopped);
        return 0;
    }

    int matchBusId(const QByteArray &bytes)
    {
        if (bytes.size() < 5)
            return EINVAL;
        const QByteArray name = cString(bytes.mid(4));
        if (name.size() >= kBusIdSize)
            return EINVAL;
        std::lock_guard lock(mutex);
        if (bytes.startsWith("add ")) {
            if (findSlotLocked(name))
                return 0;
            for (MatchSlot &slot : matchTable) {
                if (!slot.name.isEmpty())
                    continue;
                slot.name = name;
                slot.probed = false;
                if (slot.state != SlotState::Alloc && slot.state != SlotState::Removed)
                    slot.state = SlotState::Added;
                writeMatchTableLocked();
                return 0;
            }
            return ENOMEM;
        }
        if (bytes.startsWith("del ")) {
            MatchSlot *slot = findSlotLocked(name);
            if (!slot)
                return ENODEV;
            // del_match_busid, quirks and all: an Added entry stays until
            // rebind clears it.
            if (slot->state == SlotState::Other)
                slot->name.clear();
            if (slot->state != SlotState::Other && slot->state != SlotState::Added)
                slot->state = SlotState::Removed;
            writeMatchTableLocked();
            return 0;
        }
        return EINVAL;
    }

    int rebind(const QByteArray &bytes)
    {
        const QByteArray name = cString(bytes);
        if (name.size() >= kBusIdSize)
            return EINVAL;
        std::lock_guard lock(mutex);
        MatchSlot *slot = findSlotLocked(name);
        if (!slot)
            return ENODEV;
        if (!slot->probed) {
            // A real kernel oopses here (do_rebind on a NULL udev): refused
            // loudly, never emulated as a success.
            qWarning("usb stand-in: rebind of \"%s\", which usbip-host never bound: "
                     "the kernel would dereference a NULL device here",
                name.constData());
            return EFAULT;
        }
        slot->state = SlotState::Other;
        // do_rebind is device_attach: a device still bound (to usbip-host
        // too) keeps its driver; an unbound one gets the usb driver, as
        // usbip-host now refuses it.
        const QString busId = QString::fromUtf8(name);
        if (devicePathLocked(busId) && UsbFixture::driverOf(roots, busId).isEmpty())
            logFailure(UsbFixture::setDriver(roots, busId, kUsbDriver));
        slot->name.clear();
        writeMatchTableLocked();
        return 0;
    }

    int usbipSockfd(const QString &busId, const QByteArray &bytes)
    {
        qsizetype at = 0;
        const auto number = scanNumber(bytes, at);
        if (!number || *number > INT_MAX || *number < INT_MIN)
            return EINVAL;
        const int fd = int(*number);
        std::shared_ptr<Session> stopped;
        {
            std::lock_guard lock(mutex);
            const auto found = stubs.find(busId);
            if (found == stubs.end())
                return ENODEV;
            StubDevice &stub = found->second;
            if (fd != -1) {
                if (stub.status != kSdevAvailable || socketType(fd) != SOCK_STREAM)
                    return EINVAL;
                Fd duplicate(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
                if (!duplicate.valid())
                    return errno;
                auto session = std::make_shared<StubSession>(stub.device);
                session->fd = std::move(duplicate);
                session->busId = busId;
                session->deviceId = stub.deviceId;
                stub.session = session;
                stub.status = kSdevUsed;
                writeUsbipStatusLocked(busId, kSdevUsed);
                sessions.push_back(session);
                session->thread = std::thread([this, raw = session.get()] { runStub(*raw); });
                return 0;
            }
            // SDEV_EVENT_DOWN: shut down, and available again, still bound.
            if (stub.status != kSdevUsed)
                return EINVAL;
            stub.session->shutdownConnection();
            stopped = takeLocked(stub.session);
            stub.session.reset();
            stub.status = kSdevAvailable;
            writeUsbipStatusLocked(busId, kSdevAvailable);
        }
        join(stopped);
        return 0;
    }

    int attach(const QByteArray &bytes)
    {
        qsizetype at = 0;
        std::array<quint32, 4> values {};
        for (quint32 &value : values) {
            const auto number = scanNumber(bytes, at);
            if (!number)
                return EINVAL;
            value = quint32(*number); // %u wraps a minus sign, as sscanf does
        }
        const auto [port, sockfd, deviceId, speed] = values;
        std::lock_guard lock(mutex);
        ensurePortsLocked();
        if (ports.empty())
            return ENODEV;
        if (port >= ports.size() || speed < 1 || speed > 6)
            return EINVAL;
        // The hub comes from the speed, only the root hub port from PORT.
        const size_t index = (speed >= 5 ? size_t(hcPorts) : 0) + port % size_t(hcPorts);
        if (sockfd > quint32(INT_MAX) || socketType(int(sockfd)) != SOCK_STREAM)
            return EINVAL;
        if (ports[index].status != kVdevFree)
            return EBUSY;
        Fd duplicate(::fcntl(int(sockfd), F_DUPFD_CLOEXEC, 0));
        if (!duplicate.valid())
            return errno;
        auto session = std::make_shared<PortSession>();
        session->fd = std::move(duplicate);
        session->port = int(index);
        session->deviceId = deviceId;
        VhciPort &vhciPort = ports[index];
        vhciPort.status = kVdevUsed;
        vhciPort.speed = speed;
        vhciPort.deviceId = deviceId;
        vhciPort.sockfd = sockfd;
        vhciPort.session = session;
        writeVhciStatusLocked();
        sessions.push_back(session);
        session->thread = std::thread([this, raw = session.get()] { runPort(*raw); });
        return 0;
    }

    int detach(const QByteArray &bytes, bool &freed)
    {
        const auto port = parseKernelInt(bytes);
        if (!port)
            return EINVAL;
        std::shared_ptr<Session> stopped;
        {
            std::lock_guard lock(mutex);
            ensurePortsLocked();
            if (*port < 0 || size_t(*port) >= ports.size()
                || ports[size_t(*port)].status == kVdevFree)
                return EINVAL;
            std::shared_ptr<PortSession> session = ports[size_t(*port)].session;
            releasePortLocked(size_t(*port));
            if (session) {
                session->shutdownConnection();
                stopped = takeLocked(session);
            }
        }
        join(stopped);
        freed = true;
        return 0;
    }

    // --- connections -------------------------------------------------------------

    void runStub(StubSession &session)
    {
        const int fd = session.fd.get();
        std::array<char, usbip::kUrbHeaderSize> raw {};
        while (receiveAll(fd, raw.data(), raw.size())) {
            const auto header = usbip::decodeUrbHeader(QByteArrayView(raw.data(), raw.size()));
            // stub_rx.c valid_request: any other devid ends the session.
            if (!header || header->deviceId != session.deviceId)
                break;
            if (header->command == usbip::UrbCommand::CmdUnlink) {
                // Every URB here completes at once, so nothing is left to
                // unlink: status 0, under the unlink's own seqnum.
                usbip::UrbHeader unlinked;
                unlinked.command = usbip::UrbCommand::RetUnlink;
                unlinked.sequence = header->sequence;
                if (!sendAll(fd, usbip::encodeUrbHeader(unlinked)))
                    break;
                continue;
            }
            if (header->command != usbip::UrbCommand::CmdSubmit)
                break;
            const qsizetype size = usbip::payloadSize(*header, header->direction);
            if (size < 0 || size > kMaxPayload)
                break;
            QByteArray payload(size, Qt::Uninitialized);
            if (size && !receiveAll(fd, payload.data(), size))
                break;
            const bool in = header->direction == usbip::kDirectionIn;
            const QByteArray out = in ? QByteArray() : payload.left(std::max(header->length, 0));
            // No isochronous endpoints: such a URB stalls.
            UsbTransferResult result { kStall, 0, {} };
            if (header->packetCount <= 0 && header->endpoint == 0)
                result = session.simulated.control(header->setup, out, header->length);
            else if (header->packetCount <= 0)
                result = session.simulated.bulk(header->endpoint, in, out, header->length);
            usbip::UrbHeader reply;
            reply.command = usbip::UrbCommand::RetSubmit;
            reply.sequence = header->sequence;
            reply.status = result.status;
            // What follows must be what the length says, whatever the setup
            // packet claimed the direction to be.
            reply.length = in ? qint32(result.data.size()) : result.actual;
            QByteArray message = usbip::encodeUrbHeader(reply);
            if (in)
                message += result.data;
            if (!sendAll(fd, message))
                break;
        }
        // stub_shutdown_connection + device reset: available again, still
        // bound to usbip-host — unless whoever ended it already took over.
        session.shutdownConnection();
        {
            std::lock_guard lock(mutex);
            const auto found = stubs.find(session.busId);
            if (found != stubs.end() && found->second.session.get() == &session) {
                found->second.session.reset();
                found->second.status = kSdevAvailable;
                writeUsbipStatusLocked(session.busId, kSdevAvailable);
            }
        }
        session.finished = true;
    }

    bool sendSubmit(PortSession &session, quint32 sequence, const UsbTransfer &transfer)
    {
        usbip::UrbHeader header;
        header.command = usbip::UrbCommand::CmdSubmit;
        header.sequence = sequence;
        header.deviceId = session.deviceId;
        header.direction = transfer.in ? usbip::kDirectionIn : usbip::kDirectionOut;
        header.endpoint = quint32(transfer.endpoint);
        header.flags = transfer.in ? kUrbDirIn : 0;
        header.length = transfer.in ? transfer.length : qint32(transfer.data.size());
        if (transfer.endpoint == 0)
            header.setup = transfer.setup;
        QByteArray message = usbip::encodeUrbHeader(header);
        if (!transfer.in)
            message += transfer.data;
        std::lock_guard lock(session.writeMutex);
        return sendAll(session.fd.get(), message);
    }

    void runPort(PortSession &session)
    {
        // vhci enumerates at once: the first URB on the wire is the
        // device descriptor.
        UsbTransfer enumeration;
        enumeration.in = true;
        enumeration.setup = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 18, 0x00 };
        enumeration.length = 18;
        auto pending = std::make_shared<Pending>();
        pending->direction = usbip::kDirectionIn;
        pending->length = enumeration.length;
        pending->enumeration = true;
        const quint32 sequence = nextSequence++;
        {
            std::lock_guard lock(session.pendingMutex);
            session.pending[sequence] = pending;
        }
        bool alive = sendSubmit(session, sequence, enumeration);
        // Why the session ended, said when it does: a device that goes away
        // in a test is then told from one the stand-in let go of.
        QString why = alive ? QStringLiteral("the connection closed")
                            : QStringLiteral("the enumeration could not be sent");
        const int fd = session.fd.get();
        std::array<char, usbip::kUrbHeaderSize> raw {};
        while (alive && receiveAll(fd, raw.data(), raw.size())) {
            const auto header = usbip::decodeUrbHeader(QByteArrayView(raw.data(), raw.size()));
            if (!header) {
                why = QStringLiteral("a malformed URB header: ") + header.error().message;
                break;
            }
            if (header->command == usbip::UrbCommand::RetUnlink)
                continue; // never sent one; vhci only logs a stray answer
            if (header->command != usbip::UrbCommand::RetSubmit) {
                why = QStringLiteral("a command that is no answer");
                break;
            }
            std::shared_ptr<Pending> answeredUrb;
            {
                std::lock_guard lock(session.pendingMutex);
                const auto found = session.pending.find(header->sequence);
                // vhci_recv_ret_submit: an unknown seqnum ends the session.
                if (found == session.pending.end()) {
                    why = QStringLiteral("an answer to unknown URB %1").arg(header->sequence);
                    break;
                }
                answeredUrb = found->second;
                session.pending.erase(found);
            }
            const qsizetype size = usbip::payloadSize(*header, answeredUrb->direction);
            const bool in = answeredUrb->direction == usbip::kDirectionIn;
            if (size < 0 || size > kMaxPayload || (in && header->length > answeredUrb->length)) {
                why = QStringLiteral("an answer of %1 bytes to URB %2")
                          .arg(header->length)
                          .arg(header->sequence);
                break;
            }
            QByteArray payload(size, Qt::Uninitialized);
            if (size && !receiveAll(fd, payload.data(), size))
                break;
            UsbTransferResult result { header->status, header->length,
                in ? payload.left(header->length) : QByteArray() };
            if (answeredUrb->enumeration) {
                alive = enumerated(session, result);
                if (!alive)
                    why = QStringLiteral("the enumeration ended it (the descriptor's status "
                                         "%1, %2 bytes)")
                              .arg(result.status)
                              .arg(result.data.size());
                continue;
            }
            {
                std::lock_guard lock(session.pendingMutex);
                answeredUrb->result = std::move(result);
                answeredUrb->done = true;
            }
            session.answered.notify_all();
        }
        qInfo("usb stand-in: the session on vhci port %d ended: %s", session.port, qPrintable(why));
        // vhci_shutdown_connection + vhci_device_reset: the port frees
        // itself — unless detach already did.
        session.shutdownConnection();
        {
            std::lock_guard lock(session.pendingMutex);
            session.ended = true;
            for (auto &[sequenceNumber, waiting] : session.pending)
                waiting->done = true;
            session.pending.clear();
        }
        session.answered.notify_all();
        bool freed = false;
        {
            std::lock_guard lock(mutex);
            const auto index = size_t(session.port);
            if (index < ports.size() && ports[index].session.get() == &session) {
                releasePortLocked(index);
                freed = true;
            }
        }
        if (freed)
            notifyWatchers();
        session.finished = true;
    }

    // The descriptor came back: the device appears on the vhci bus, with
    // its node. A failed enumeration ends the session (and frees the port).
    bool enumerated(PortSession &session, const UsbTransferResult &result)
    {
        if (result.status != 0 || result.data.size() < 18 || result.data.at(1) != 0x01)
            return false;
        {
            std::lock_guard lock(mutex);
            VhciPort &port = ports[size_t(session.port)];
            if (port.session.get() != &session)
                return false;
            const int bus = session.port >= hcPorts ? 4 : 3;
            FixtureDevice device;
            device.busId = QStringLiteral("%1-%2").arg(bus).arg(session.port % hcPorts + 1);
            device.vendorId = le16(result.data, 8);
            device.productId = le16(result.data, 10);
            device.bcdDevice = le16(result.data, 12);
            device.deviceClass = quint8(result.data.at(4));
            device.deviceSubClass = quint8(result.data.at(5));
            device.deviceProtocol = quint8(result.data.at(6));
            device.maxPacketSize0 = quint8(result.data.at(7));
            device.speed = speedText(port.speed);
            device.deviceNumber = nextDeviceNumberLocked(bus);
            // Configured as the kernel's generic driver would: the simulated
            // device's one configuration has one vendor-specific interface.
            device.interfaces = { FixtureInterface { 0xff, 0x00, 0x00 } };
            device.imported = true;
            device.driver = kUsbDriver;
            // What releasing the port undoes, set first so a failure below
            // is undone with it (the session ends and frees the port).
            port.localBusId = device.busId;
            port.deviceNumber = device.deviceNumber;
            port.node = UsbFixture::deviceNodePath(bus, device.deviceNumber);
            // The node, then the sysfs device, then the status line: code
            // that finds the device by any of these finds what came before
            // (watchers, called last, find it all).
            if (const auto node = UsbFixture::makeDeviceNode(roots, bus, device.deviceNumber);
                !node) {
                logFailure(node.error());
                return false;
            }
            if (Status added = UsbFixture::addDevice(roots, device); !added) {
                logFailure(added);
                return false;
            }
            writeVhciStatusLocked();
        }
        notifyWatchers();
        return true;
    }

    static void logFailure(const Error &error) { logFailure(Status(error)); }

    void notifyWatchers()
    {
        std::lock_guard lock(watchersMutex);
        for (const Watcher &watcher : watchers) {
            QMetaObject::invokeMethod(
                watcher.context.get(), [changed = watcher.changed] { changed(); },
                Qt::QueuedConnection);
        }
    }
};

UsbKernelStandIn::UsbKernelStandIn(device::SysfsRoot roots)
    : d(std::make_unique<Private>(std::move(roots)))
{ }

UsbKernelStandIn::~UsbKernelStandIn()
{
    // Connections first, so transfers still waiting fail at once; then the
    // worker that may be running one; then every thread.
    {
        std::lock_guard lock(d->mutex);
        for (const auto &session : d->sessions)
            session->shutdownConnection();
    }
    d->jobs.reset();
    Private::Taken all;
    {
        std::lock_guard lock(d->mutex);
        all.swap(d->sessions);
    }
    Private::join(all);
    d->server.reset();
    std::lock_guard lock(d->watchersMutex);
    for (Watcher &watcher : d->watchers) {
        if (watcher.context->thread() != QThread::currentThread())
            watcher.context.release()->deleteLater();
    }
    d->watchers.clear();
}

Status UsbKernelStandIn::write(QStringView absolutePath, QByteArrayView bytes)
{
    return write(absolutePath, d->roots.path(absolutePath), bytes);
}

Status UsbKernelStandIn::write(
    QStringView absolutePath, const QString &realPath, QByteArrayView bytes)
{
    d->reap();
    const QByteArray data = bytes.toByteArray();
    const auto failed = [&](int error) {
        return Error::make(QStringLiteral("kernel_write"),
            QStringLiteral("writing \"%1\" to %2: %3")
                .arg(QString::fromUtf8(data.trimmed()).left(80), absolutePath.toString(),
                    QString::fromLocal8Bit(std::strerror(error))));
    };
    const QFileInfo real(realPath);
    if (!real.exists())
        return failed(ENOENT);
    if (real.isDir())
        return failed(EISDIR);

    // Which kernel file this is, links followed (".../devices/1-1/driver/unbind"
    // is the usb driver's unbind).
    QString kernelPath;
    const bool underDev = isUnder(absolutePath, u"/dev");
    if (isUnder(absolutePath, u"/sys") || underDev) {
        const QString root
            = QFileInfo(underDev ? d->roots.devRoot() : d->roots.sysRoot()).canonicalFilePath();
        const QString parent = QFileInfo(real.path()).canonicalFilePath();
        if (root == u"/")
            kernelPath = parent + QLatin1Char('/') + real.fileName();
        else if (parent.startsWith(root + QLatin1Char('/')))
            kernelPath = parent.mid(root.size()) + QLatin1Char('/') + real.fileName();
    }

    int error = 0;
    bool devicesChanged = false;
    static const QRegularExpression driverFile(
        QStringLiteral("^/sys/bus/usb/drivers/([^/]+)/([^/]+)$"));
    static const QRegularExpression deviceAttribute(
        QStringLiteral("^(/sys/devices/.+/([^/:]+))/([^/]+)$"));
    static const QStringList readOnly { QStringLiteral("busnum"), QStringLiteral("devnum"),
        QStringLiteral("devpath"), QStringLiteral("idVendor"), QStringLiteral("idProduct"),
        QStringLiteral("bcdDevice"), QStringLiteral("bDeviceClass"),
        QStringLiteral("bDeviceSubClass"), QStringLiteral("bDeviceProtocol"),
        QStringLiteral("bMaxPacketSize0"), QStringLiteral("bNumConfigurations"),
        QStringLiteral("bNumInterfaces"), QStringLiteral("speed"), QStringLiteral("version"),
        QStringLiteral("serial"), QStringLiteral("product"), QStringLiteral("manufacturer"),
        QStringLiteral("dev"), QStringLiteral("usbip_status") };
    if (const auto match = driverFile.match(kernelPath); match.hasMatch()) {
        const QString driver = match.captured(1);
        const QString file = match.captured(2);
        if (file == u"bind")
            error = d->bind(driver, data);
        else if (file == u"unbind")
            error = d->unbind(driver, data);
        else if (driver == kUsbipHost && file == u"match_busid")
            error = d->matchBusId(data);
        else if (driver == kUsbipHost && file == u"rebind")
            error = d->rebind(data);
        else
            error = kPlainFile;
    } else if (kernelPath == kVhciDir + QStringLiteral("/attach")) {
        error = d->attach(data);
    } else if (kernelPath == kVhciDir + QStringLiteral("/detach")) {
        error = d->detach(data, devicesChanged);
    } else if (kernelPath == kVhciDir + QStringLiteral("/status")
        || kernelPath == kVhciDir + QStringLiteral("/nports")) {
        error = EACCES;
    } else if (const auto attribute = deviceAttribute.match(kernelPath); attribute.hasMatch()
               && d->roots.resolve(kDevicesDir + QLatin1Char('/') + attribute.captured(2))
                   == attribute.captured(1)) {
        if (attribute.captured(3) == u"usbip_sockfd")
            error = d->usbipSockfd(attribute.captured(2), data);
        else if (readOnly.contains(attribute.captured(3)))
            error = EACCES;
        else
            error = kPlainFile;
    } else {
        error = kPlainFile;
    }
    if (error == kPlainFile) {
        // Any other attribute: kept as written.
        QFile file(realPath);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)
            || file.write(data) != data.size())
            return failed(EIO);
        return {};
    }
    if (devicesChanged)
        d->notifyWatchers();
    if (error)
        return failed(error);
    return {};
}

bool UsbKernelStandIn::watchUsbDevices(std::function<void()> changed)
{
    std::lock_guard lock(d->watchersMutex);
    d->watchers.push_back(Watcher { std::make_unique<QObject>(), std::move(changed) });
    return true;
}

Status UsbKernelStandIn::unplug(const QString &busId)
{
    d->reap();
    std::shared_ptr<Session> stopped;
    {
        std::lock_guard lock(d->mutex);
        if (!d->devicePathLocked(busId))
            return standInError(QStringLiteral("no device %1 to unplug").arg(busId));
        auto device = UsbFixture::readDevice(d->roots, busId);
        if (!device)
            return standInError(QStringLiteral("cannot read device %1").arg(busId));
        d->noteDeviceNumberLocked(device->busNumber(), device->deviceNumber);
        // As the kernel: usb_disconnect reaches the stub's disconnect, which
        // shuts the export's connection down.
        stopped = d->disconnectStubLocked(busId);
        if (Status removed = UsbFixture::removeDevice(d->roots, busId); !removed)
            return removed;
        d->unplugged[busId] = *device;
    }
    Private::join(stopped);
    d->notifyWatchers();
    return {};
}

Status UsbKernelStandIn::plug(const QString &busId)
{
    d->reap();
    {
        std::lock_guard lock(d->mutex);
        if (d->devicePathLocked(busId))
            return standInError(QStringLiteral("device %1 is plugged already").arg(busId));
        const auto found = d->unplugged.find(busId);
        if (found == d->unplugged.end())
            return standInError(QStringLiteral("device %1 was never unplugged").arg(busId));
        FixtureDevice device = found->second;
        device.deviceNumber = d->nextDeviceNumberLocked(device.busNumber());
        device.driver = kUsbDriver;
        if (Status added = UsbFixture::addDevice(d->roots, device); !added)
            return added;
        d->unplugged.erase(found);
    }
    d->notifyWatchers();
    return {};
}

QJsonObject UsbKernelStandIn::deviceStatus() const
{
    std::lock_guard lock(d->mutex);
    QJsonArray devices;
    for (const QString &busId : d->roots.list(kDevicesDir)) {
        if (busId.contains(QLatin1Char(':')) || busId.startsWith(u"usb"))
            continue;
        const QString base = kDevicesDir + QLatin1Char('/') + busId;
        const auto number = [&](const QString &name) {
            return d->roots.readAttribute(base + QLatin1Char('/') + name)
                .value_or(QString())
                .toInt();
        };
        QJsonObject device {
            { QStringLiteral("busid"), busId },
            { QStringLiteral("busnum"), number(QStringLiteral("busnum")) },
            { QStringLiteral("devnum"), number(QStringLiteral("devnum")) },
            { QStringLiteral("driver"), UsbFixture::driverOf(d->roots, busId) },
        };
        if (const auto stub = d->stubs.find(busId); stub != d->stubs.end())
            device.insert(QStringLiteral("usbip_status"), stub->second.status);
        devices.append(device);
    }
    QJsonArray matchBusIds;
    for (const MatchSlot &slot : d->matchTable) {
        if (!slot.name.isEmpty())
            matchBusIds.append(QString::fromUtf8(slot.name));
    }
    return QJsonObject { { QStringLiteral("devices"), devices },
        { QStringLiteral("match_busid"), matchBusIds } };
}

Result<UsbTransferResult> UsbKernelStandIn::submit(
    const QString &node, const UsbTransfer &transfer, int timeoutMs)
{
    d->reap();
    if (transfer.endpoint < 0 || transfer.endpoint > 15)
        return standInError(QStringLiteral("no endpoint %1").arg(transfer.endpoint));
    std::shared_ptr<PortSession> session;
    {
        std::lock_guard lock(d->mutex);
        const QString clean = QDir::cleanPath(node);
        for (const VhciPort &port : d->ports) {
            if (port.session && !port.node.isEmpty() && port.node == clean)
                session = port.session;
        }
    }
    if (!session)
        return standInError(QStringLiteral("no imported device at %1").arg(node));
    UsbTransfer sent = transfer;
    if (sent.endpoint == 0) {
        sent.in = (sent.setup[0] & 0x80) != 0;
        if (sent.in)
            sent.length = quint16(sent.setup[6] | (sent.setup[7] << 8));
    }
    auto pending = std::make_shared<Pending>();
    pending->direction = sent.in ? usbip::kDirectionIn : usbip::kDirectionOut;
    pending->length = sent.in ? sent.length : qint32(sent.data.size());
    const quint32 sequence = d->nextSequence++;
    {
        std::lock_guard lock(session->pendingMutex);
        if (session->ended)
            return standInError(QStringLiteral("the connection of %1 has ended").arg(node));
        session->pending[sequence] = pending;
    }
    if (!d->sendSubmit(*session, sequence, sent))
        return standInError(QStringLiteral("the connection of %1 has ended").arg(node));
    std::unique_lock lock(session->pendingMutex);
    // Left pending on a timeout: a late answer is taken and dropped rather
    // than ending the session as an unknown seqnum would.
    if (!session->answered.wait_for(
            lock, std::chrono::milliseconds(timeoutMs), [&] { return pending->done; }))
        return standInError(
            QStringLiteral("no answer from %1 within %2 ms").arg(node).arg(timeoutMs));
    if (!pending->result)
        return standInError(
            QStringLiteral("the connection of %1 ended before its answer").arg(node));
    return *pending->result;
}

QJsonObject UsbKernelStandIn::portStatus() const
{
    std::lock_guard lock(d->mutex);
    d->ensurePortsLocked();
    QJsonArray ports;
    for (size_t index = 0; index < d->ports.size(); ++index) {
        const VhciPort &port = d->ports[index];
        ports.append(QJsonObject {
            { QStringLiteral("hub"),
                int(index) >= d->hcPorts ? QStringLiteral("ss") : QStringLiteral("hs") },
            { QStringLiteral("port"), int(index) },
            { QStringLiteral("status"), port.status },
            { QStringLiteral("speed"), int(port.speed) },
            { QStringLiteral("devid"), qint64(port.deviceId) },
            { QStringLiteral("sockfd"), qint64(port.sockfd) },
            { QStringLiteral("local_busid"),
                port.localBusId.isEmpty() ? QStringLiteral("0-0") : port.localBusId },
            { QStringLiteral("node"), port.node },
        });
    }
    return QJsonObject { { QStringLiteral("ports"), ports } };
}

QString UsbKernelStandIn::controlSocketPath() const
{
    return d->controlPath.isEmpty() ? StandInControl::socketPath(d->roots.sysRoot())
                                    : d->controlPath;
}

Status UsbKernelStandIn::listen(const QString &socketPath)
{
    if (d->server)
        return standInError(QStringLiteral("the control socket is listening already"));
    d->controlPath
        = socketPath.isEmpty() ? StandInControl::socketPath(d->roots.sysRoot()) : socketPath;
    d->jobs = std::make_unique<JobQueue>();
    d->server = std::make_unique<ControlServer>(*this, *d->jobs);
    if (Status listening = d->server->listen(d->controlPath); !listening) {
        d->server.reset();
        d->jobs.reset();
        return listening;
    }
    return {};
}

QJsonObject UsbKernelStandIn::handleCommand(const QJsonObject &command)
{
    const auto failure = [](const QString &message) {
        return QJsonObject { { QStringLiteral("error"), message } };
    };
    const auto done = [&](const Status &status) {
        return status ? QJsonObject { { QStringLiteral("ok"), true } }
                      : failure(status.error().message);
    };
    const QString op = command.value(QStringLiteral("op")).toString();
    if (op == u"unplug")
        return done(unplug(command.value(QStringLiteral("busid")).toString()));
    if (op == u"plug")
        return done(plug(command.value(QStringLiteral("busid")).toString()));
    if (op == u"status")
        return deviceStatus();
    if (op == u"ports")
        return portStatus();
    if (op == u"measure") {
        TransferMeasurement measure;
        measure.controlCount
            = qBound(1, command.value(QStringLiteral("control_count")).toInt(1000), 1'000'000);
        measure.bulkBytes = qBound<qint64>(
            0, command.value(QStringLiteral("bulk_bytes")).toInteger(64 << 20), qint64(1) << 34);
        measure.urbBytes
            = qBound(512, command.value(QStringLiteral("urb_bytes")).toInt(64 * 1024), 1 << 20);
        measure.bulkInFlight
            = qBound(1, command.value(QStringLiteral("bulk_in_flight")).toInt(8), 64);
        auto measured = measureTransfers(command.value(QStringLiteral("node")).toString(), measure);
        return measured ? *measured : failure(measured.error().message);
    }
    if (op != u"control" && op != u"bulk")
        return failure(QStringLiteral("unknown op \"%1\"").arg(op));

    const QString node = command.value(QStringLiteral("node")).toString();
    UsbTransfer transfer;
    const auto data = QByteArray::fromBase64Encoding(
        command.value(QStringLiteral("data")).toString().toLatin1(),
        QByteArray::AbortOnBase64DecodingErrors);
    if (!data)
        return failure(QStringLiteral("data is not base64"));
    transfer.data = *data;
    if (op == u"control") {
        const QByteArray setup
            = QByteArray::fromHex(command.value(QStringLiteral("setup")).toString().toLatin1());
        if (setup.size() != 8)
            return failure(QStringLiteral("setup must be 16 hex digits"));
        std::copy(setup.begin(), setup.end(), transfer.setup.begin());
        transfer.in = (transfer.setup[0] & 0x80) != 0;
        if (transfer.in)
            transfer.data.clear();
    } else {
        transfer.endpoint = command.value(QStringLiteral("endpoint")).toInt(1);
        const QString direction = command.value(QStringLiteral("direction")).toString();
        if (direction != u"in" && direction != u"out")
            return failure(QStringLiteral("direction must be \"in\" or \"out\""));
        transfer.in = direction == u"in";
        transfer.length = command.value(QStringLiteral("length")).toInt();
        if (transfer.endpoint <= 0)
            return failure(QStringLiteral("a bulk transfer needs an endpoint above 0"));
    }
    const int timeoutMs = command.value(QStringLiteral("timeout_ms")).toInt(10000);
    return transferAnswer(submit(node, transfer, timeoutMs));
}

Result<QJsonObject> UsbKernelStandIn::measureTransfers(
    const QString &node, const TransferMeasurement &measure)
{
    using Clock = std::chrono::steady_clock;
    // Small control transfers one after another, as a driver polling a
    // device would: a 48-byte CMD_SUBMIT out, a RET_SUBMIT with 64 bytes
    // back (112 bytes). The device keeps what a vendor OUT request stored.
    UsbTransfer store;
    store.setup = { 0x40, 0x01, 0x00, 0x00, 0x00, 0x00, 64, 0x00 };
    store.data = QByteArray(64, 'm');
    if (auto stored = submit(node, store); !stored)
        return stored.error();
    UsbTransfer poll;
    poll.setup = { 0xc0, 0x02, 0x00, 0x00, 0x00, 0x00, 64, 0x00 };
    std::vector<double> micros;
    micros.reserve(size_t(measure.controlCount));
    for (int i = 0; i < measure.controlCount; ++i) {
        const auto started = Clock::now();
        auto answered = submit(node, poll);
        const auto took = Clock::now() - started;
        if (!answered)
            return answered.error();
        if (answered->actual != 64)
            return standInError(QStringLiteral("a control transfer returned %1 bytes, not 64")
                                    .arg(answered->actual));
        micros.push_back(std::chrono::duration<double, std::micro>(took).count());
    }
    // The tail's shape tells a timer (slow ones evenly spaced, all alike)
    // from contention (scattered, varied): the slowest 1% with their places.
    std::vector<size_t> order(micros.size());
    std::iota(order.begin(), order.end(), size_t(0));
    const size_t slowCount = std::max<size_t>(1, micros.size() / 100);
    std::partial_sort(order.begin(), order.begin() + qsizetype(std::min(slowCount, order.size())),
        order.end(), [&micros](size_t l, size_t r) { return micros[l] > micros[r]; });
    order.resize(std::min(slowCount, order.size()));
    std::sort(order.begin(), order.end());
    QJsonArray slowest;
    for (size_t index : order)
        slowest.append(QJsonArray { qint64(index), micros[index] });
    std::sort(micros.begin(), micros.end());
    const auto percentile = [&micros](double p) {
        return micros[std::min(micros.size() - 1, size_t(p * double(micros.size())))];
    };

    // Bulk through the loopback endpoint, with `bulkInFlight` URBs under way
    // at once as a streaming driver keeps them: each worker sends a URB out,
    // then asks for one back in, so the device's FIFO never fills. Every URB
    // carries the same bytes, so whatever comes back is checked whole.
    QByteArray chunk(measure.urbBytes, Qt::Uninitialized);
    for (qsizetype i = 0; i < chunk.size(); ++i)
        chunk[i] = char(i * 31 + 7);
    std::atomic<qint64> moved { 0 };
    std::mutex failureMutex;
    std::optional<Error> failure;
    const auto worker = [&] {
        UsbTransfer out;
        out.endpoint = 1;
        out.data = chunk;
        UsbTransfer in;
        in.endpoint = 1;
        in.in = true;
        in.length = measure.urbBytes;
        const auto stop = [&](Error error) {
            std::lock_guard lock(failureMutex);
            if (!failure)
                failure = std::move(error);
        };
        while (moved.load() < measure.bulkBytes) {
            {
                std::lock_guard lock(failureMutex);
                if (failure)
                    return;
            }
            auto sent = submit(node, out);
            if (!sent)
                return stop(sent.error());
            // Another worker's URB may be ahead in the FIFO: any whole URB will do.
            for (;;) {
                auto received = submit(node, in);
                if (!received)
                    return stop(received.error());
                if (received->data.isEmpty()) {
                    std::this_thread::yield();
                    continue;
                }
                if (received->data != chunk)
                    return stop(standInError(QStringLiteral("bulk data came back changed")));
                break;
            }
            moved += 2 * qint64(chunk.size());
        }
    };
    const auto bulkStarted = Clock::now();
    {
        std::vector<std::thread> workers;
        for (int i = 0; i < measure.bulkInFlight; ++i)
            workers.emplace_back(worker);
        for (std::thread &each : workers)
            each.join();
    }
    if (failure)
        return *failure;
    const double seconds = std::chrono::duration<double>(Clock::now() - bulkStarted).count();
    return QJsonObject { { QStringLiteral("control_count"), measure.controlCount },
        { QStringLiteral("control_p50_us"), percentile(0.50) },
        { QStringLiteral("control_p99_us"), percentile(0.99) },
        { QStringLiteral("control_slowest"), slowest },
        { QStringLiteral("bulk_bytes"), moved.load() },
        { QStringLiteral("urb_bytes"), measure.urbBytes },
        { QStringLiteral("bulk_in_flight"), measure.bulkInFlight },
        { QStringLiteral("bulk_mb_per_s"),
            seconds > 0 ? double(moved.load()) / seconds / 1e6 : 0.0 } };
}

StandInControl::StandInControl(const QString &root)
    : m_path(socketPath(root))
{ }

StandInControl::~StandInControl() = default;

QString StandInControl::socketPath(const QString &root)
{
    return QDir(root).absoluteFilePath(QStringLiteral("standin.sock"));
}

Result<QJsonObject> StandInControl::call(const QJsonObject &request, int timeoutMs)
{
    const auto broken = [this](const QString &what) {
        m_socket.reset();
        m_buffer.clear();
        return Error::make(
            QStringLiteral("usb_standin_control"), QStringLiteral("%1 (%2)").arg(what, m_path));
    };
    const QDeadlineTimer deadline(timeoutMs);
    if (!m_socket) {
        m_socket = std::make_unique<QLocalSocket>();
        m_socket->connectToServer(m_path);
        if (!m_socket->waitForConnected(int(deadline.remainingTime())))
            return broken(
                QStringLiteral("cannot connect to the stand-in: ") + m_socket->errorString());
    }
    m_socket->write(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n');
    while (m_socket->bytesToWrite() > 0) {
        if (!m_socket->waitForBytesWritten(int(deadline.remainingTime())))
            return broken(QStringLiteral("cannot send to the stand-in"));
    }
    qsizetype end = -1;
    for (;;) {
        m_buffer += m_socket->readAll();
        end = m_buffer.indexOf('\n');
        if (end >= 0)
            break;
        if (deadline.hasExpired() || !m_socket->waitForReadyRead(int(deadline.remainingTime())))
            return broken(QStringLiteral("no answer from the stand-in"));
    }
    const QJsonDocument answer = QJsonDocument::fromJson(m_buffer.left(end));
    m_buffer.remove(0, end + 1);
    if (!answer.isObject())
        return broken(QStringLiteral("the stand-in answered no JSON object"));
    const QJsonObject object = answer.object();
    if (object.contains(QStringLiteral("error")))
        return Error::make(
            QStringLiteral("usb_standin"), object.value(QStringLiteral("error")).toString());
    return object;
}

} // namespace cloop::testsupport::usb
