#include "app-dashboard/ui/appearance.h"

#include "app-dashboard/ui/outlinedstyle.h"

#include <QApplication>

#include <cmath>
#include <optional>

namespace cloop::dashboard {

namespace {

double luminance(const QColor &color)
{
    const auto channel = [](double value) {
        return value <= 0.03928 ? value / 12.92 : std::pow((value + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF());
}

void setBoth(
    QPalette &palette, QPalette::ColorRole role, const QColor &active, const QColor &disabled)
{
    palette.setColor(QPalette::Active, role, active);
    palette.setColor(QPalette::Inactive, role, active);
    palette.setColor(QPalette::Disabled, role, disabled);
}

} // namespace

std::optional<Theme> themeNamed(const QString &name)
{
    if (name.compare(QLatin1String("light"), Qt::CaseInsensitive) == 0)
        return Theme::Light;
    if (name.compare(QLatin1String("dark"), Qt::CaseInsensitive) == 0)
        return Theme::Dark;
    return std::nullopt;
}

QPalette paletteFor(Theme theme)
{
    const bool dark = theme == Theme::Dark;
    const QColor window = dark ? QColor(0x2b, 0x2f, 0x36) : QColor(0xef, 0xf1, 0xf4);
    const QColor base = dark ? QColor(0x1f, 0x22, 0x28) : QColor(0xff, 0xff, 0xff);
    const QColor alternate = dark ? QColor(0x26, 0x2a, 0x31) : QColor(0xf5, 0xf7, 0xfa);
    const QColor text = dark ? QColor(0xe8, 0xea, 0xed) : QColor(0x1c, 0x1f, 0x24);
    const QColor muted = dark ? QColor(0x9a, 0xa3, 0xae) : QColor(0x5c, 0x65, 0x70);
    const QColor button = dark ? QColor(0x3a, 0x3f, 0x48) : QColor(0xe4, 0xe7, 0xeb);
    const QColor highlight = dark ? QColor(0x4d, 0x8f, 0xe0) : QColor(0x1f, 0x5f, 0xbf);
    const QColor link = dark ? QColor(0x7c, 0xb7, 0xff) : QColor(0x0b, 0x57, 0xd0);
    const QColor disabledText = dark ? QColor(0x80, 0x87, 0x91) : QColor(0x70, 0x77, 0x80);

    QPalette palette;
    setBoth(palette, QPalette::Window, window, window);
    setBoth(palette, QPalette::WindowText, text, disabledText);
    setBoth(palette, QPalette::Base, base, window);
    setBoth(palette, QPalette::AlternateBase, alternate, alternate);
    setBoth(palette, QPalette::Text, text, disabledText);
    setBoth(palette, QPalette::PlaceholderText, muted, muted);
    setBoth(palette, QPalette::Button, button, window);
    setBoth(palette, QPalette::ButtonText, text, disabledText);
    setBoth(palette, QPalette::BrightText,
        dark ? QColor(0xff, 0x8a, 0x80) : QColor(0xb3, 0x26, 0x1e), disabledText);
    setBoth(palette, QPalette::Highlight, highlight, button);
    setBoth(palette, QPalette::HighlightedText,
        dark ? QColor(0x10, 0x12, 0x16) : QColor(0xff, 0xff, 0xff), disabledText);
    setBoth(palette, QPalette::Link, link, disabledText);
    setBoth(palette, QPalette::ToolTipBase, base, base);
    setBoth(palette, QPalette::ToolTipText, text, text);
    setBoth(palette, QPalette::Light, dark ? QColor(0x4a, 0x50, 0x5a) : QColor(0xff, 0xff, 0xff),
        window);
    setBoth(palette, QPalette::Midlight, dark ? QColor(0x42, 0x47, 0x50) : QColor(0xd8, 0xdc, 0xe1),
        window);
    setBoth(
        palette, QPalette::Mid, dark ? QColor(0x33, 0x37, 0x3f) : QColor(0xb8, 0xbe, 0xc6), window);
    setBoth(palette, QPalette::Dark, dark ? QColor(0x18, 0x1a, 0x1f) : QColor(0x8a, 0x92, 0x9c),
        window);
    setBoth(palette, QPalette::Shadow, QColor(0, 0, 0), QColor(0, 0, 0));
    return palette;
}

void applyTheme(QApplication &app, Theme theme)
{
    // Fusion draws with the palette alone, so both themes look the same
    // everywhere, whatever the desktop's style.
    app.setStyle(new OutlinedStyle);
    app.setPalette(paletteFor(theme));
}

double contrastRatio(const QColor &a, const QColor &b)
{
    const double la = luminance(a);
    const double lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace cloop::dashboard
