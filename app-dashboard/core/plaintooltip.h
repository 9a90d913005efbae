#pragma once

#include <QString>

namespace cloop::dashboard {

// A tooltip renders text that looks like markup as rich text, and tooltips
// carry what people wrote (names, reasons, a forwarder's report): escaped in
// a paragraph, it shows as written, line breaks included.
inline QString plainToolTip(const QString &text)
{
    if (text.isEmpty())
        return {};
    return QStringLiteral("<p style=\"white-space:pre-wrap\">%1</p>").arg(text.toHtmlEscaped());
}

} // namespace cloop::dashboard
