#include "common/api/identity.h"

namespace cloop::api {

std::optional<ProjectRole> Identity::roleIn(const QString &project) const
{
    for (const Role &held : roles) {
        if (held.project == project)
            return held.role;
    }
    return std::nullopt;
}

} // namespace cloop::api
