#include "hub/cluster/peerdirectory.h"

namespace cloop::hub {

QString describeMember(const PeerMember &member)
{
    if (member.name.isEmpty())
        return QStringLiteral("hub member %1").arg(member.id);
    return QStringLiteral("hub member %1 (%2)").arg(member.id).arg(member.name);
}

} // namespace cloop::hub
