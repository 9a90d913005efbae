#pragma once

#include "common/api/recordfields.h"

#include <QLatin1StringView>
#include <QStringView>

#include <optional>

namespace cloop::api {

// What a user may be in a project: administrators bind its devices and
// decide requests, maintainers may request bindings.
enum class ProjectRole
{
    Administrator,
    Maintainer
};

QLatin1StringView projectRoleName(ProjectRole role);
std::optional<ProjectRole> parseProjectRole(QStringView name);

} // namespace cloop::api
