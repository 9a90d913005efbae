#include "common/api/projectrole.h"

namespace cloop::api {

namespace {
constexpr std::array<NamedValue<ProjectRole>, 2> kRoles { {
    { ProjectRole::Administrator, QLatin1StringView("administrator") },
    { ProjectRole::Maintainer, QLatin1StringView("maintainer") },
} };

} // namespace

QLatin1StringView projectRoleName(ProjectRole role)
{
    return nameIn(kRoles, role);
}

std::optional<ProjectRole> parseProjectRole(QStringView name)
{
    return valueIn(kRoles, name);
}

} // namespace cloop::api
