#include "app-dashboard/ui/trafficgraph.h"

#include "app-dashboard/ui/statechip.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <climits>
#include <numeric>

namespace cloop::dashboard {

namespace {

constexpr int kSwatch = 8;
constexpr int kGap = 6;

qint64 peakOf(const QList<qint64> &steps)
{
    return steps.isEmpty() ? 0 : *std::max_element(steps.cbegin(), steps.cend());
}

qint64 sumOf(const QList<qint64> &steps)
{
    return std::accumulate(steps.cbegin(), steps.cend(), qint64(0));
}

} // namespace

TrafficGraph::TrafficGraph(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("trafficGraph"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void TrafficGraph::setHistory(const TrafficHistory &history)
{
    if (history == m_history)
        return;
    m_history = history;
    const QString words = summary();
    setAccessibleName(tr("Traffic"));
    setAccessibleDescription(words + QLatin1Char('\n') + details());
    setToolTip(details());
    updateGeometry();
    update();
}

QString TrafficGraph::describeRate(double bytesPerSecond, const QLocale &locale)
{
    // Whole bytes under a kilobyte: "0.3 B/s" would be noise.
    if (bytesPerSecond < 1000)
        return tr("%1 B/s").arg(locale.toString(qint64(bytesPerSecond + 0.5)));
    return tr("%1/s").arg(
        locale.formattedDataSize(qint64(bytesPerSecond + 0.5), 1, QLocale::DataSizeSIFormat));
}

double TrafficGraph::rateOf(qint64 bytes) const
{
    return m_history.stepSeconds > 0 ? double(bytes) / double(m_history.stepSeconds) : 0;
}

QString TrafficGraph::describeFrameRate(double perSecond, bool urbs, const QLocale &locale)
{
    const QString number = locale.toString(perSecond, 'f', perSecond < 10 ? 1 : 0);
    return urbs ? tr("%1 URBs/s").arg(number) : tr("%1 frames/s").arg(number);
}

QStringList TrafficGraph::legendLines() const
{
    const auto newest = [](const QList<qint64> &steps) {
        return steps.isEmpty() ? qint64(0) : steps.constLast();
    };
    QString toRun = describeRate(rateOf(newest(m_history.toRun)), locale());
    QString fromRun = describeRate(rateOf(newest(m_history.fromRun)), locale());
    if (countsFrames()) {
        toRun += QStringLiteral(" · ")
            + describeFrameRate(rateOf(newest(m_history.framesToRun)), m_history.urbs, locale());
        fromRun += QStringLiteral(" · ")
            + describeFrameRate(rateOf(newest(m_history.framesFromRun)), m_history.urbs, locale());
    }
    return { tr("%1 to the run").arg(toRun), tr("%1 from the run").arg(fromRun) };
}

bool TrafficGraph::countsFrames() const
{
    return !m_history.framesToRun.isEmpty();
}

qint64 TrafficGraph::droppedInWindow() const
{
    return sumOf(m_history.droppedToRun) + sumOf(m_history.droppedFromRun);
}

QString TrafficGraph::summary() const
{
    QString words = legendLines().join(QStringLiteral(" · "));
    if (const qint64 dropped = droppedInWindow(); dropped > 0)
        words += QStringLiteral(" · ")
            + tr("%n frames dropped", nullptr, int(std::min<qint64>(dropped, INT_MAX)));
    return words;
}

QString TrafficGraph::windowWords() const
{
    const qint64 seconds = m_history.stepSeconds * qint64(m_history.toRun.size());
    return seconds >= 120 ? tr("the last %n min", nullptr, int(seconds / 60))
                          : tr("the last %n s", nullptr, int(seconds));
}

QString TrafficGraph::details() const
{
    const QString window = windowWords();
    const qint64 peakToRun = peakOf(m_history.toRun);
    const qint64 peakFromRun = peakOf(m_history.fromRun);
    if (peakToRun == 0 && peakFromRun == 0)
        return tr("No traffic in %1: no run used the device.").arg(window);
    QString words = tr("Over %1, in steps of %n s, at most %2 to the run and %3 from it.", nullptr,
        int(m_history.stepSeconds))
                        .arg(window, describeRate(rateOf(peakToRun), locale()),
                            describeRate(rateOf(peakFromRun), locale()));
    // USB/IP rides TCP: a URB is never dropped on the way.
    if (countsFrames() && !m_history.urbs) {
        const qint64 droppedToRun = sumOf(m_history.droppedToRun);
        const qint64 droppedFromRun = sumOf(m_history.droppedFromRun);
        words += QLatin1Char(' ')
            + (droppedToRun + droppedFromRun == 0
                    ? tr("No frame was dropped.")
                    : tr("Frames dropped: %1 on the way to the run (its forwarder's stream or "
                         "socket was full), %2 on the way from it (the interface could not take "
                         "them).")
                          .arg(locale().toString(droppedToRun), locale().toString(droppedFromRun)));
    }
    return words;
}

QColor TrafficGraph::toRunColor() const
{
    return toneColor(StateChip::Tone::Pending, palette(), QPalette::Base);
}

QColor TrafficGraph::fromRunColor() const
{
    return toneColor(StateChip::Tone::Warning, palette(), QPalette::Base);
}

int TrafficGraph::legendWidth() const
{
    int widest = 0;
    // As wide as the widest rate it may show, so the graph does not jump.
    QString widestRate = describeRate(999e6, locale());
    if (countsFrames())
        widestRate += QStringLiteral(" · ") + describeFrameRate(99999, m_history.urbs, locale());
    for (const QString &line :
        { tr("%1 to the run").arg(widestRate), tr("%1 from the run").arg(widestRate) })
        widest = std::max(widest, fontMetrics().horizontalAdvance(line));
    return kSwatch + kGap + widest;
}

QSize TrafficGraph::sizeHint() const
{
    return { 200 + kGap * 2 + legendWidth(), fontMetrics().height() * 2 + 6 };
}

QSize TrafficGraph::minimumSizeHint() const
{
    return { 120 + kGap * 2 + legendWidth(), fontMetrics().height() * 2 + 6 };
}

void TrafficGraph::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        update();
    QWidget::changeEvent(event);
}

QRectF TrafficGraph::plotArea() const
{
    return QRectF(0, 0, width() - legendWidth() - kGap * 2, height()).adjusted(1, 2, -1, -2);
}

double TrafficGraph::xOfStep(qsizetype step) const
{
    const QRectF plot = plotArea();
    const qsizetype count = m_history.toRun.size();
    return count > 1 ? plot.left() + plot.width() * double(step) / double(count - 1) : plot.right();
}

void TrafficGraph::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRect legend(width() - legendWidth(), 0, legendWidth(), height());
    const QRectF plot = plotArea();

    // The scale: both ways on one, so their heights compare.
    const qint64 peak = std::max<qint64>({ peakOf(m_history.toRun), peakOf(m_history.fromRun), 1 });
    const auto pointsOf = [&](const QList<qint64> &steps) {
        QPolygonF points;
        const qsizetype count = steps.size();
        for (qsizetype i = 0; i < count; ++i) {
            const double x = count > 1 ? plot.left() + plot.width() * double(i) / double(count - 1)
                                       : plot.right();
            points.append(
                { x, plot.bottom() - plot.height() * double(steps.at(i)) / double(peak) });
        }
        return points;
    };

    const QColor axis = palette().color(QPalette::PlaceholderText);
    painter.setPen(QPen(axis, 1));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());

    if (peakOf(m_history.toRun) == 0 && peakOf(m_history.fromRun) == 0) {
        // Flat lines say little; the words say it all.
        painter.setPen(axis);
        painter.drawText(plot, Qt::AlignCenter, tr("no traffic in %1").arg(windowWords()));
    }

    // Steps that dropped frames are marked along the top, in the colour of
    // a failure, with how many in words beside the first mark.
    if (const qint64 dropped = droppedInWindow(); dropped > 0) {
        const QColor failure = toneColor(StateChip::Tone::Bad, palette(), QPalette::Base);
        painter.setPen(QPen(failure, 2));
        const qsizetype count = m_history.droppedToRun.size();
        for (qsizetype i = 0; i < count; ++i) {
            if (m_history.droppedToRun.at(i) + m_history.droppedFromRun.value(i) > 0)
                painter.drawLine(
                    QPointF(xOfStep(i), plot.top()), QPointF(xOfStep(i), plot.top() + 6));
        }
        painter.drawText(plot.adjusted(2, 0, 0, 0), Qt::AlignLeft | Qt::AlignTop,
            tr("%n dropped", nullptr, int(std::min<qint64>(dropped, INT_MAX))));
    }

    const QColor toRun = toRunColor();
    const QColor fromRun = fromRunColor();
    if (const QPolygonF line = pointsOf(m_history.toRun); !line.isEmpty()) {
        QPainterPath area;
        area.moveTo(line.first().x(), plot.bottom());
        for (const QPointF &point : line)
            area.lineTo(point);
        area.lineTo(line.last().x(), plot.bottom());
        QColor fill = toRun;
        fill.setAlphaF(0.22f);
        painter.fillPath(area, fill);
        painter.setPen(QPen(toRun, 1.5));
        painter.drawPolyline(line);
    }
    if (const QPolygonF line = pointsOf(m_history.fromRun); !line.isEmpty()) {
        painter.setPen(QPen(fromRun, 1.5));
        painter.drawPolyline(line);
    }

    // The legend: each way's colour and its latest rate.
    const QStringList lines = legendLines();
    const int lineHeight = fontMetrics().height();
    const int top = (height() - lineHeight * 2) / 2;
    for (int i = 0; i < 2; ++i) {
        const QRect row(legend.left(), top + i * lineHeight, legend.width(), lineHeight);
        const QRectF swatch(row.left(), row.center().y() - kSwatch / 2.0 + 1, kSwatch, kSwatch);
        painter.fillRect(swatch, i == 0 ? toRun : fromRun);
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(
            row.adjusted(kSwatch + kGap, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, lines.at(i));
    }
}

} // namespace cloop::dashboard
