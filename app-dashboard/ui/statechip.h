#pragma once

#include <QWidget>

namespace cloop::dashboard {

// A state at a glance: a rounded chip with a dot in the state's colour and
// the state in words ("Live", "Offline since 14:05"), so colour is never
// the only sign. The tones' colours are picked from the palette to stand
// out from the card (WCAG 1.4.11, 3:1), the words keep the text colour.
class StateChip final : public QWidget
{
    Q_OBJECT

public:
    enum class Tone
    {
        Good, // live
        Neutral, // offline
        Warning, // live but not serving: a USB device unplugged
        Pending, // awaiting enrollment
        Bad, // revoked
    };
    Q_ENUM(Tone)

    explicit StateChip(QWidget *parent = nullptr);

    void setState(Tone tone, const QString &text);
    Tone tone() const { return m_tone; }
    QString text() const { return m_text; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    Tone m_tone = Tone::Neutral;
    QString m_text;
};

// The tone's colour for marks drawn on `background` of `palette` (the dot,
// a pass or fail mark): the tone's hue, darkened or lightened until it has
// a contrast of at least 3:1 with that background and with the chip's fill.
QColor toneColor(
    StateChip::Tone tone, const QPalette &palette, QPalette::ColorRole background = QPalette::Base);
// The chip's fill: the tone's colour faint on the background, where the
// palette's text still reads at 4.5:1.
QColor toneFill(
    StateChip::Tone tone, const QPalette &palette, QPalette::ColorRole background = QPalette::Base);

} // namespace cloop::dashboard
