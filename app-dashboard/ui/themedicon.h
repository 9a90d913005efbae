#pragma once

#include <QIcon>
#include <QPalette>
#include <QString>

namespace cloop::dashboard {

// One of the dashboard's line icons (`name` under :/icons, without ".svg")
// drawn in the palette's own colours: its text colour where it stands on a
// window, a button or a list, the highlighted text colour when its item is
// selected, the disabled text colour when disabled. The SVGs carry one
// grey that cannot read on both a light and a dark background at 3:1.
QIcon themedIcon(const QString &name, const QPalette &palette);

// The colour the icons' SVGs are drawn in, which themedIcon replaces.
inline constexpr QLatin1StringView kIconInk { "#5b6b7f" };

} // namespace cloop::dashboard
