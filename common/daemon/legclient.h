#pragma once

#include "common/daemon/streamlegdial.h"

#include <QLatin1StringView>

namespace cloop::tunnel {
class TunnelClient;
}

namespace cloop::daemon {

class DaemonConnector;

// The client of one stream leg, not yet started, made after the daemon's
// session: the same trust and plaintext rules and the same credential, a
// hello at `endpointPath` that carries the leg's ticket and nothing of the
// session's own (no capabilities, no update channel), and attempts repeated
// quickly within `bound`: the hub may not have read the ticket yet. A leg
// without a URL goes to the hub the session is connected to now; one with a
// URL (another hub member) is trusted as the session's hub is, plaintext to
// loopback only. nullptr, logged, when there is no such URL or no session.
tunnel::TunnelClient *makeLegClient(const tunnel::TunnelClient *session, const QString &credential,
    const protocol::DirectLeg &leg, QLatin1StringView endpointPath, std::chrono::milliseconds bound,
    QObject *parent);

// makeLegClient for the session `connector` keeps, within
// StreamLegDial::kDialBound. The connector outlives every dial.
StreamLegDial::Dialer sessionLegDialer(
    const DaemonConnector &connector, QLatin1StringView endpointPath);

} // namespace cloop::daemon
