#include "bench/sessionload.h"

#include "common/net/hubtls.h"
#include "common/protocol/controlmessage.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>

#include <cmath>

#include <unistd.h>

namespace cloop::bench {

SessionLoad::SessionLoad(QList<HubAddress> hubs, QStringList tokens)
    : m_hubs(std::move(hubs))
    , m_tokens(std::move(tokens))
{ }

SessionLoad::~SessionLoad()
{
    clear();
}

void SessionLoad::add(int index)
{
    const HubAddress &hub = m_hubs.at(index % m_hubs.size());
    tunnel::TunnelClientOptions options;
    options.hubUrls = { hub.url };
    options.endpointPath = QStringLiteral("/api/forwarders/connect");
    options.role = protocol::PeerRole::Forwarder;
    options.trust = net::HubTrust(*net::PinSet::parse(hub.pin), {});
    auto client = std::make_unique<tunnel::TunnelClient>(options);
    client->setEnrollmentToken(m_tokens.at(index));
    tunnel::TunnelClient *raw = client.get();
    connect(raw, &tunnel::TunnelClient::enrolled, this,
        [raw](const protocol::Enrolled &enrolled) { raw->setCredential(enrolled.credential); });
    connect(raw, &tunnel::TunnelClient::ready, this, [this, index] {
        m_live.insert(index);
        if (m_sinceMark.isValid())
            m_welcomedAt.push_back(m_sinceMark.elapsed());
    });
    connect(raw, &tunnel::TunnelClient::disconnected, this, [this, index](const QString &why) {
        if (m_live.remove(index))
            ++m_lossReasons[why];
        else if (m_sinceMark.isValid())
            ++m_attemptFailures[why];
    });
    m_clients.push_back(std::move(client));
    raw->start();
}

bool SessionLoad::connectAll(int inFlight, std::chrono::milliseconds limit)
{
    QElapsedTimer took;
    took.start();
    while (liveCount() < m_tokens.size() && took.elapsed() < limit.count()) {
        while (size() < m_tokens.size() && size() - liveCount() < inFlight)
            add(size());
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    return liveCount() == m_tokens.size();
}

bool SessionLoad::awaitLive(int count, std::chrono::milliseconds limit)
{
    QElapsedTimer took;
    took.start();
    while (liveCount() != count && took.elapsed() < limit.count())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return liveCount() == count;
}

void SessionLoad::markReturn()
{
    m_sinceMark.start();
    m_welcomedAt.clear();
    m_attemptFailures.clear();
}

double SessionLoad::backAfter(double fraction) const
{
    const auto wanted = static_cast<size_t>(std::ceil(fraction * double(m_tokens.size())));
    if (wanted == 0 || wanted > m_welcomedAt.size())
        return -1;
    return double(m_welcomedAt.at(wanted - 1)) / 1000.0;
}

void SessionLoad::clear()
{
    m_clients.clear();
    m_live.clear();
}

ProcessUse useOf(qint64 pid)
{
    ProcessUse use;
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (status.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : status.readAll().split('\n'))
            if (line.startsWith("VmRSS:"))
                use.rssMiB = line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    }
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (stat.open(QIODevice::ReadOnly)) {
        const QByteArray text = stat.readAll();
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        // utime and stime: fields 14 and 15 of the whole line.
        use.cpuSeconds = (fields.value(11).toDouble() + fields.value(12).toDouble())
            / double(::sysconf(_SC_CLK_TCK));
    }
    return use;
}

} // namespace cloop::bench
