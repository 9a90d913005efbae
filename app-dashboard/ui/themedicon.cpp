#include "app-dashboard/ui/themedicon.h"

#include <QFile>
#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>

namespace cloop::dashboard {

namespace {

QPixmap drawn(const QByteArray &svg, const QColor &ink, int side)
{
    QByteArray inked = svg;
    inked.replace(QByteArray(kIconInk.data(), kIconInk.size()), ink.name().toLatin1());
    QSvgRenderer renderer(inked);
    QPixmap pixmap(side, side);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    renderer.render(&painter);
    return pixmap;
}

} // namespace

QIcon themedIcon(const QString &name, const QPalette &palette)
{
    QFile file(QStringLiteral(":/icons/%1.svg").arg(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray svg = file.readAll();
    QIcon icon;
    // Drawn at the sizes the screens use and twice that for high-DPI
    // screens; QIcon picks the nearest.
    for (int side : { 16, 20, 24, 32, 40, 48 }) {
        icon.addPixmap(
            drawn(svg, palette.color(QPalette::Active, QPalette::WindowText), side), QIcon::Normal);
        icon.addPixmap(drawn(svg, palette.color(QPalette::Active, QPalette::HighlightedText), side),
            QIcon::Selected);
        icon.addPixmap(drawn(svg, palette.color(QPalette::Disabled, QPalette::ButtonText), side),
            QIcon::Disabled);
        icon.addPixmap(
            drawn(svg, palette.color(QPalette::Active, QPalette::WindowText), side), QIcon::Active);
    }
    return icon;
}

} // namespace cloop::dashboard
