#include "hub/relay/legjoin.h"

#include "common/logging.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/channelsplice.h"
#include "common/tunnel/tunnelconnection.h"

using namespace Qt::StringLiterals;

namespace cloop::hub {

using protocol::CloseCode;
using tunnel::Channel;
using tunnel::TunnelConnection;

LegJoin::LegJoin(TunnelConnection *forwarder, TunnelConnection *agent, Openings openings,
    std::shared_ptr<tunnel::SpliceCounters> counters, QObject *parent)
    : QObject(parent)
    , m_forwarderLeg(forwarder)
    , m_agentLeg(agent)
    , m_openings(std::move(openings))
    , m_counters(std::move(counters))
{
    forwarder->setParent(this);
    agent->setParent(this);
}

LegJoin::~LegJoin()
{
    m_destroying = true;
    finish(CloseCode::ConnectionLost, u"the hub is stopping"_s, true);
}

void LegJoin::start()
{
    const auto lost = [this](const QString &whose) {
        return [this, whose](const QString &reason) {
            finish(CloseCode::ConnectionLost, u"the %1's leg was lost: %2"_s.arg(whose, reason),
                false);
        };
    };
    connect(m_forwarderLeg, &TunnelConnection::disconnected, this, lost(u"forwarder"_s));
    connect(m_agentLeg, &TunnelConnection::disconnected, this, lost(u"agent"_s));
    auto forwarder = m_forwarderLeg->channels()->openChannel(m_openings.toForwarder);
    auto agent = forwarder ? m_agentLeg->channels()->openChannel(m_openings.toAgent)
                           : Result<Channel *>(forwarder.error());
    if (!forwarder || !agent) {
        finish(CloseCode::Refused, (forwarder ? agent : forwarder).error().message, false);
        return;
    }
    m_forwarder = *forwarder;
    m_agent = *agent;
    for (Channel *side : { *forwarder, *agent }) {
        connect(side, &Channel::opened, this, &LegJoin::joinIfReady);
        // Before the join, a side that ends takes the stream with it.
        connect(side, &Channel::closed, this, [this](CloseCode code, const QString &reason) {
            if (!m_splice)
                finish(code, reason.isEmpty() ? u"a side of the stream closed"_s : reason, false);
        });
    }
}

void LegJoin::joinIfReady()
{
    Channel *forwarder = m_forwarder.data();
    Channel *agent = m_agent.data();
    if (m_over || m_splice || !forwarder || !agent || forwarder->state() != Channel::State::Open
        || agent->state() != Channel::State::Open)
        return;
    forwarder->disconnect(this);
    agent->disconnect(this);
    // The forwarder's channel is side A: A to B is toward the agent.
    m_splice = new tunnel::ChannelSplice(forwarder, agent, this);
    m_splice->setAResumable(m_openings.agentResumable);
    m_splice->countInto(m_counters);
    connect(m_splice, &tunnel::ChannelSplice::ended, this,
        [this](CloseCode code, const QString &reason) {
            // A leg that went takes its channel first: say whose it was.
            const auto gone = [](TunnelConnection *leg) { return !leg || !leg->isOpen(); };
            const QString whose = gone(m_forwarderLeg) ? u"forwarder"_s
                : gone(m_agentLeg)                     ? u"agent"_s
                                                       : QString();
            finish(code,
                whose.isEmpty() ? reason : u"the %1's leg was lost: %2"_s.arg(whose, reason),
                false);
        });
    Q_EMIT joined();
}

void LegJoin::end(CloseCode code, const QString &reason)
{
    finish(code, reason, true);
}

void LegJoin::finish(CloseCode code, const QString &reason, bool quietly)
{
    if (m_over)
        return;
    m_over = true;
    if (m_splice) {
        m_splice->disconnect(this);
        if (!m_splice->isEnded())
            m_splice->end(code, reason);
    }
    for (Channel *side : { m_forwarder.data(), m_agent.data() }) {
        if (side && side->state() != Channel::State::Closed) {
            side->disconnect(this);
            side->close(code, reason);
        }
    }
    // The channels' closes went out first: each daemon reads why its
    // stream ended before its leg goes.
    for (TunnelConnection *leg : { m_forwarderLeg.data(), m_agentLeg.data() }) {
        if (leg) {
            leg->disconnect(this);
            connect(leg, &TunnelConnection::disconnected, this, &LegJoin::deleteWhenClosed);
            leg->close(reason);
        }
    }
    if (!quietly)
        Q_EMIT ended(code, reason);
    deleteWhenClosed();
}

void LegJoin::deleteWhenClosed()
{
    if (m_destroying)
        return;
    const auto open = [](TunnelConnection *leg) { return leg && leg->isOpen(); };
    if (!open(m_forwarderLeg) && !open(m_agentLeg))
        deleteLater();
}

} // namespace cloop::hub
