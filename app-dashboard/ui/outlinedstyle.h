#pragma once

#include <QProxyStyle>

namespace cloop::dashboard {

// Fusion, with edges that can be seen. Fusion draws the outline of a field,
// a check box, a radio button and a button a shade darker than the window,
// which on a dark palette is the field's own colour: filter fields lose
// their border and an unchecked radio button disappears. WCAG 1.4.11 asks
// 3:1 for what shows that a control is there, so this draws those edges
// again in outlineColor(). A disabled control keeps Fusion's faint edge,
// which also tells it from an enabled one at a glance.
class OutlinedStyle final : public QProxyStyle
{
    Q_OBJECT

public:
    OutlinedStyle();

    void drawPrimitive(PrimitiveElement element, const QStyleOption *option, QPainter *painter,
        const QWidget *widget = nullptr) const override;
};

// The palette's edge colour: the faintest mix of its muted text into its
// window that stands 3:1 from both the window and a field's base.
QColor outlineColor(const QPalette &palette);

} // namespace cloop::dashboard
