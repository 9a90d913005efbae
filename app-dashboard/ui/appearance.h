#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

#include <optional>

class QApplication;

namespace cloop::dashboard {

enum class Theme
{
    Light,
    Dark
};

// "light", "dark" or empty (the desktop's own); anything else is refused.
std::optional<Theme> themeNamed(const QString &name);
// The Fusion style's palettes, tuned so every text role reads on its
// background (WCAG contrast of at least 4.5:1, checked by a test).
QPalette paletteFor(Theme theme);
void applyTheme(QApplication &app, Theme theme);
// The WCAG 2 contrast ratio of two colours, 1 to 21.
double contrastRatio(const QColor &a, const QColor &b);

} // namespace cloop::dashboard
