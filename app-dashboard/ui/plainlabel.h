#pragma once

#include <QLabel>

namespace cloop::dashboard {

// A label for words that come from the hub or from a person: names,
// reasons, states, error messages. A QLabel guesses rich text from what it
// is given, so whoever wrote a reason could otherwise format, link or embed
// images in what another person reads; this one shows text as written.
class PlainLabel final : public QLabel
{
    Q_OBJECT

public:
    explicit PlainLabel(QWidget *parent = nullptr)
        : PlainLabel(QString(), parent)
    { }
    explicit PlainLabel(const QString &text, QWidget *parent = nullptr)
        : QLabel(parent)
    {
        setTextFormat(Qt::PlainText);
        setText(text);
    }
};

} // namespace cloop::dashboard
